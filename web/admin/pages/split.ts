/**
 * Split: the contract every payment goes to. Deployed from the merchant's own wallet (the factory is
 * permissionless: the page's script sends `createSplit` with today's payees, then the service checks
 * it on chain and records it, `POST /api/split/register`); its payees and shares; what it holds
 * undistributed, with "distribute now" from the wallet; and its transactions.
 */
import type { AppDeps } from '../../../shared/app/deps';
import { loadMerchant } from '../../../shared/app/merchants';
import { INFLOW_MAX_RECEIPTS, listSplitTransactions } from '../../../shared/app/inflows';
import { expectedRecipients } from '../../../shared/app/splits';
import { DomainError } from '../../../shared/domain/errors';
import type { DepositEthView, SplitTransactionView } from '../../../shared/domain/inflows';
import type { MerchantSplit, SplitRecipient } from '../../../shared/domain/merchant';
import { ZERO_ADDRESS } from '../../../shared/domain/payment';
import { sameRecipients } from '../../../shared/domain/split';
import { formatUnits } from '../../../shared/domain/units';
import { routes } from '../../../shared/http/routes';
import { DependencyUnavailableError } from '../../../shared/ports/errors';
import { adminPath, attrs, esc, field, formStatus, notice, panel, percentOfBps, shortHex, txLink, utcTime, type AdminPage, type Html, type PageContext } from '../kit';

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

const kindNames: Record<SplitTransactionView['kind'], string> = { payment: 'Into the split', deposit: 'Into a deposit address', distribution: 'Distributed', withdrawal: 'Withdrawn' };

const receiptLink = (receiptId: string): Html => `<a href="${esc(adminPath('receipts', { id: receiptId }))}">${esc(receiptId)}</a>`;

/** Whose a transfer in is: a receipt's payment, a receipt's sweep, or nobody's (marked, for the merchant to look into). */
const whose = (transaction: SplitTransactionView): Html => {
  const of = transaction.receiptId ? ` ${receiptLink(transaction.receiptId)}` : '';
  switch (transaction.attribution) {
    case 'payment':
      return `<span><span class="badge badge-success">Payment</span>${of}</span>`;
    case 'sweep':
      return `<span><span class="badge">Sweep</span>${of}</span>`;
    case 'unattributed':
      return `<span><span class="badge badge-warning">Unattributed</span>${transaction.receiptId ? ` <span class="hint">at the address of</span>${of}` : ''}</span>`;
    default:
      return '<span class="hint">out of the split</span>';
  }
};

/** ETH at deposit addresses beyond the receipts' recorded payments: found by balance, so no transaction names it. */
const depositEthNote = (rows: readonly DepositEthView[]): Html => {
  const stray = rows.filter((row) => row.unattributed !== '0');
  if (stray.length === 0) return '';
  return notice(
    'warning',
    `<p id="deposit-eth-unattributed">ETH no payment accounts for reached ${stray.length === 1 ? 'a deposit address' : 'deposit addresses'} in these blocks (a plain transfer leaves no log, so it shows by balance): ${stray
      .map((row) => `${esc(formatUnits(BigInt(row.unattributed), 18))} ETH at ${shortHex(row.address)} (receipt ${receiptLink(row.receiptId)})`)
      .join('; ')}.</p>`,
  );
};

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
      // A token the shop does not accept: its amount in base units, and its contract.
      const known = tokens.get(transaction.token);
      const amount = known ? `${esc(formatUnits(BigInt(transaction.amount), known.decimals))} ${esc(known.symbol)}` : `${esc(transaction.amount)} <span class="hint">units of</span> ${shortHex(transaction.token)}`;
      const incoming = transaction.kind === 'payment' || transaction.kind === 'deposit';
      const counterpart = incoming ? transaction.from : transaction.to;
      return `<tr${attrs({ 'data-tx': transaction.txHash, 'data-kind': transaction.kind, 'data-attribution': transaction.attribution })}><th scope="row" data-label="What">${esc(kindNames[transaction.kind])}</th><td data-label="Whose">${whose(transaction)}</td><td class="num" data-label="Amount"><span>${amount}</span></td><td data-label="${incoming ? 'From' : 'To'}">${shortHex(counterpart)}</td><td data-label="Transaction">${txLink(explorer, transaction.txHash)}</td><td class="num" data-label="Block">${transaction.blockNumber}</td></tr>`;
    })
    .join('\n');
  const range = page.fromBlock !== null ? `<p class="hint">Blocks ${page.fromBlock} to ${page.toBlock}, oldest first.</p>` : '';
  const truncated = page.receiptsTruncated ? notice('info', `<p>Only your newest ${INFLOW_MAX_RECEIPTS} receipts are looked at here: transfers into older receipts’ deposit addresses are not listed, and their sweeps show as unattributed.</p>`) : '';
  return panel(
    'transactions',
    'Transactions',
    `<p>Every transfer into your split and into your receipts’ deposit addresses, and whose it is. A receipt’s payment reaches its deposit address and is later swept to the split: it counts once, when it reached the address. <strong>Unattributed</strong>: nothing claims it (a stray transfer, a token you do not accept); it is yours all the same, and a deposit address sends it to the split with its next sweep.</p>
${range}${truncated}${depositEthNote(page.depositEth)}${
      page.transactions.length === 0
        ? '<p class="empty">No transfers in these blocks yet.</p>'
        : `<div class="table-wrap"><table class="table-cards split-transactions">
<caption class="visually-hidden">Transfers into the split and the deposit addresses, and distributions out of the split</caption>
<thead><tr><th scope="col">What</th><th scope="col">Whose</th><th scope="col" class="num">Amount</th><th scope="col">From / to</th><th scope="col">Transaction</th><th scope="col" class="num">Block</th></tr></thead>
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
  sections.push(balances, depositsSection(), transactions);
  return sections.join('\n');
};

/**
 * Sweeping from the merchant's own wallet: what waits at paid receipts' deposit addresses, and a token
 * the shop does not accept sent to one, moved into the split by `DepositFactory.sweepMany`, which the
 * service encodes (`POST /api/console/deposits/sweep`) and the wallet sends. The service sweeps paid
 * deposits on its own before it distributes; this is for a merchant who does not want to wait.
 */
const depositsSection = (): Html =>
  panel(
    'deposits',
    'Deposit addresses',
    `<p>Each receipt is paid at an address of its own, which can only send on to your split. The service moves paid receipts’ money into the split before it distributes; you can also do it now from your wallet (you pay the network fee).</p>
<div id="deposit-sweep"${attrs({ 'data-sweep': routes.consoleDepositsSweep.path })}>
<h3 id="sweep-title">Paid receipts</h3>
<p><button class="button" type="button" id="sweep-button">Sweep paid deposits now</button></p>
${formStatus('sweep')}
<h3 id="recover-title">A token you do not accept</h3>
<form id="recover-form" class="form" novalidate aria-labelledby="recover-title">
<p>A token your shop does not accept, sent to a receipt’s address, can only go to your split too: name its contract to move it there.</p>
${field({ name: 'token', label: 'Token contract', hint: '0x followed by 40 hex digits', maxlength: 42, placeholder: '0x…' })}
<p><button class="button button-secondary" type="submit" id="recover-button">Recover to my split</button></p>
${formStatus('recover')}
</form>
</div>`,
  );

export const splitPage: AdminPage = {
  slug: 'split',
  label: 'Split',
  intro: 'The contract every payment goes to, and how it divides each one between you and the platform.',
  render,
};
