/**
 * Split: the contract every payment goes to. Deployed from the merchant's own wallet (the factory is
 * permissionless: the page's script sends `createSplit` with today's payees, then the service checks
 * it on chain and records it, `POST /api/split/register`); its payees and shares; what it holds
 * undistributed, with "distribute now" from the wallet; and its transactions.
 */
import type { AppDeps } from '../../../shared/app/deps';
import { loadMerchant } from '../../../shared/app/merchants';
import { expectedRecipients, listSplitTransactions } from '../../../shared/app/splits';
import { DomainError } from '../../../shared/domain/errors';
import type { MerchantSplit, SplitRecipient } from '../../../shared/domain/merchant';
import { ZERO_ADDRESS } from '../../../shared/domain/payment';
import { sameRecipients } from '../../../shared/domain/split';
import { formatUnits } from '../../../shared/domain/units';
import { routes } from '../../../shared/http/routes';
import { DependencyUnavailableError } from '../../../shared/ports/errors';
import { adminPath, attrs, esc, formStatus, notice, panel, percentOfBps, shortHex, txLink, utcTime, type AdminPage, type Html, type PageContext } from '../kit';

const roleNames: Record<SplitRecipient['role'], string> = { merchant: 'You', platform: 'Platform', partner: 'Partner' };

const payeesTable = (recipients: readonly SplitRecipient[], caption: string): Html => `<div class="table-wrap"><table class="table-cards payees">
<caption class="visually-hidden">${esc(caption)}</caption>
<thead><tr><th scope="col">Payee</th><th scope="col">Address</th><th scope="col" class="num">Share</th></tr></thead>
<tbody>
${recipients.map((recipient) => `<tr><th scope="row" data-label="Payee">${esc(roleNames[recipient.role])}</th><td data-label="Address"><span class="mono">${esc(recipient.address)}</span></td><td class="num" data-label="Share"><span>${esc(percentOfBps(recipient.bps))} <span class="hint">(${recipient.bps} bps)</span></span></td></tr>`).join('\n')}
</tbody>
</table></div>`;

/** The deploy button and its steps; the script sends the transaction from the signed-in wallet. */
const deployForm = (deps: AppDeps, recipients: readonly SplitRecipient[], label: string): Html => `<div class="deploy"${attrs({
  id: 'split-deploy',
  'data-factory': deps.chain?.splitFactory,
  'data-payees': recipients.map((recipient) => `${recipient.address}:${recipient.bps}`).join(','),
  'data-register': routes.splitRegister.path,
})}>
<p>Your wallet sends the transaction and pays its network fee; the platform sends nothing. Deploying the same payees again is safe: the factory answers the split that exists.</p>
<div class="actions"><button class="button button-primary" type="button" id="deploy-button">${esc(label)}</button></div>
<ol class="steps" id="deploy-steps" hidden>
<li data-step="wallet">Confirm the transaction in your wallet</li>
<li data-step="mined">Wait for the network to include it</li>
<li data-step="record">Record the split in your shop</li>
</ol>
<p class="form-error" id="deploy-error" role="alert" hidden></p>
<p class="form-status" id="deploy-status" role="status" aria-live="polite"></p>
</div>`;

const splitFacts = (deps: AppDeps, split: MerchantSplit): Html => `<dl class="facts">
<dt>Contract</dt><dd><span class="mono" id="split-address">${esc(split.address)}</span></dd>
<dt>Deployed</dt><dd>${utcTime(split.deployedAt)} · ${txLink(deps.settings.payments.explorerUrl, split.txHash)}</dd>
<dt>Network</dt><dd>Chain ${split.chainId}</dd>
</dl>`;

interface TokenInfo {
  symbol: string;
  decimals: number;
}

const tokensByAddress = (deps: AppDeps): Map<string, TokenInfo> =>
  new Map([[ZERO_ADDRESS, { symbol: 'ETH', decimals: 18 }], ...deps.settings.tokens.map((token) => [token.address.toLowerCase(), { symbol: token.symbol, decimals: token.decimals }] as const)]);

const chainProblem = (error: unknown): string | null => {
  if (error instanceof DependencyUnavailableError) return 'The network cannot be reached right now; try again in a minute.';
  if (error instanceof DomainError && error.code === 'service_unavailable') return error.message;
  return null;
};

/** What the split would hand out now per token, with a button to distribute each from the wallet. */
const balancesSection = async (deps: AppDeps, split: MerchantSplit, tokens: Map<string, TokenInfo>): Promise<Html> => {
  const chain = deps.chain!;
  const merchant = split.recipients.find((recipient) => recipient.role === 'merchant')?.address ?? split.address;
  let rows: Html;
  try {
    const holdings = await chain.splitHoldings(split.address, merchant, [...tokens.keys()]);
    rows = [...tokens]
      .map(([address, token]) => {
        const amount = holdings[address]?.distributable ?? 0n;
        return `<tr><th scope="row" data-label="Token">${esc(token.symbol)}</th><td class="num" data-label="Undistributed">${esc(formatUnits(amount, token.decimals))}</td><td class="row-actions">${
          amount > 0n
            ? `<button class="button button-small" type="button"${attrs({ 'data-distribute': address, 'data-symbol': token.symbol })}>Distribute ${esc(token.symbol)} now</button>`
            : '<span class="hint">Nothing to distribute</span>'
        }</td></tr>`;
      })
      .join('\n');
  } catch (error) {
    const problem = chainProblem(error);
    if (!problem) throw error;
    return panel('balances', 'Undistributed', notice('warning', `<p>${esc(problem)}</p>`));
  }
  return panel(
    'balances',
    'Undistributed',
    `<p>Payments wait in the split until it distributes them to every payee. The service does so on its own for paid receipts; “distribute now” sends it from your wallet (you pay the network fee).</p>
<div class="table-wrap" id="distribute" data-split="${esc(split.address)}"><table class="table-cards">
<caption class="visually-hidden">What the split holds undistributed</caption>
<thead><tr><th scope="col">Token</th><th scope="col" class="num">Undistributed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>
${formStatus('distribute')}`,
  );
};

const kindNames = { payment: 'Payment in', distribution: 'Distributed', withdrawal: 'Withdrawn' } as const;

const transactionsSection = async (deps: AppDeps, wallet: string, cursor: string | undefined, tokens: Map<string, TokenInfo>): Promise<Html> => {
  let page: Awaited<ReturnType<typeof listSplitTransactions>>;
  try {
    page = await listSplitTransactions(deps, wallet, { limit: 20, ...(cursor && { cursor }) });
  } catch (error) {
    const problem = error instanceof DomainError && error.code === 'invalid_input' ? 'That page of transactions no longer exists.' : chainProblem(error);
    if (!problem) throw error;
    return panel('transactions', 'Transactions', notice('warning', `<p>${esc(problem)}</p>`));
  }
  const explorer = deps.settings.payments.explorerUrl;
  const rows = page.transactions
    .map((transaction) => {
      const token = tokens.get(transaction.token) ?? { symbol: shortHex(transaction.token), decimals: 0 };
      const counterpart = transaction.kind === 'payment' ? transaction.from : transaction.to;
      return `<tr><th scope="row" data-label="What">${esc(kindNames[transaction.kind])}</th><td class="num" data-label="Amount">${esc(formatUnits(BigInt(transaction.amount), token.decimals))} ${esc(token.symbol)}</td><td data-label="${transaction.kind === 'payment' ? 'From' : 'To'}">${shortHex(counterpart)}</td><td data-label="Transaction">${txLink(explorer, transaction.txHash)}</td><td class="num" data-label="Block">${transaction.blockNumber}</td></tr>`;
    })
    .join('\n');
  const range = page.fromBlock !== null ? `<p class="hint">Blocks ${page.fromBlock} to ${page.toBlock}, oldest first.</p>` : '';
  return panel(
    'transactions',
    'Transactions',
    `${range}${
      page.transactions.length === 0
        ? '<p class="empty">No payments or distributions in these blocks yet.</p>'
        : `<div class="table-wrap"><table class="table-cards">
<caption class="visually-hidden">Payments into the split and distributions out of it</caption>
<thead><tr><th scope="col">What</th><th scope="col" class="num">Amount</th><th scope="col">From / to</th><th scope="col">Transaction</th><th scope="col" class="num">Block</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`
    }${page.nextCursor ? `<nav class="pager" aria-label="Pages of transactions"><span></span><a class="button button-small" rel="next" href="${esc(adminPath('split', { cursor: page.nextCursor }))}">Later transactions</a></nav>` : ''}`,
  );
};

const render = async ({ deps, wallet, query }: PageContext): Promise<Html> => {
  if (!deps.chain) return notice('warning', '<p>This deployment has no chain configured, so splits cannot be deployed or read.</p>');
  const merchant = await loadMerchant(deps, wallet);
  let recipients: SplitRecipient[] | null = null;
  let problem: string | null = null;
  try {
    recipients = await expectedRecipients(deps, wallet);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    problem = error.message;
  }
  const split = merchant.split;
  const current = split && recipients ? sameRecipients(split.recipients, recipients) : true;
  const sections: Html[] = [];
  if (!split) {
    sections.push(
      panel(
        'deploy',
        'Deploy your split',
        problem
          ? notice('danger', `<p>A split cannot be deployed yet: ${esc(problem)}.</p>`)
          : `<p>Every payment goes to your split contract, which divides it between these payees. Until it is deployed, orders answer <code>split_required</code>.</p>
${payeesTable(recipients!, 'Who the split will pay')}
${deployForm(deps, recipients!, 'Deploy from my wallet')}`,
      ),
    );
    return sections.join('\n');
  }
  sections.push(panel('split', 'Your split', `${splitFacts(deps, split)}${payeesTable(split.recipients, 'Who the split pays')}`));
  if (!current && recipients) {
    sections.push(
      panel(
        'deploy',
        'The fees changed',
        `${notice('info', '<p>The platform’s fees changed since your split was deployed. Payments keep going to your current split until you deploy one with today’s payees:</p>')}
${payeesTable(recipients, 'Who a new split would pay')}
${deployForm(deps, recipients, 'Deploy the new split from my wallet')}`,
      ),
    );
  }
  const tokens = tokensByAddress(deps);
  const [balances, transactions] = await Promise.all([balancesSection(deps, split, tokens), transactionsSection(deps, wallet, query.cursor, tokens)]);
  sections.push(balances, transactions);
  return sections.join('\n');
};

export const splitPage: AdminPage = {
  slug: 'split',
  label: 'Split',
  intro: 'The contract every payment goes to, and how it divides each one between you and the platform.',
  render,
};
