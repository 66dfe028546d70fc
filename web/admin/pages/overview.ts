/**
 * Overview: what was paid today, the receipts by status, and what the merchant holds (its part of
 * the split's undistributed balance and its wallet, from the reserve balances use case behind
 * `GET /api/reserve/balances`); and, until the shop is set up, what is left to do.
 */
import type { AppDeps } from '../../../shared/app/deps';
import { listInventory } from '../../../shared/app/inventory-list';
import { loadMerchant } from '../../../shared/app/merchants';
import { summarizeReceipts, type ReceiptSummary } from '../../../shared/app/receipt-summary';
import { getReserveBalances } from '../../../shared/app/reserve';
import { InventoryListQuery } from '../../../shared/domain/inventory';
import type { Merchant } from '../../../shared/domain/merchant';
import { receiptStatuses } from '../../../shared/domain/receipt';
import { DependencyUnavailableError } from '../../../shared/ports/errors';
import { adminPath, esc, notice, panel, usd, utcTime, type AdminPage, type Html, type PageContext } from '../kit';
import { statusBadgeClass, statusLabel } from '../receipt-labels';

const todaySection = (summary: ReceiptSummary): Html =>
  panel(
    'today',
    'Today',
    `<dl class="stats">
<div class="stat"><dt>Paid today</dt><dd id="paid-today">${esc(usd(summary.paidToday.usd))}<small>${summary.paidToday.count} ${summary.paidToday.count === 1 ? 'payment' : 'payments'} since ${utcTime(summary.dayStart)}</small></dd></div>
<div class="stat"><dt>Receipts</dt><dd>${summary.counted}${summary.truncated ? '+' : ''}<small>${summary.truncated ? `the latest ${summary.counted} counted` : 'in all'}</small></dd></div>
</dl>`,
  );

const statusSection = (summary: ReceiptSummary): Html => {
  const rows = receiptStatuses.filter((status) => summary.byStatus[status] > 0);
  return panel(
    'statuses',
    'Receipts by status',
    rows.length === 0
      ? `<p class="empty">No receipts yet. They appear here as your backend creates orders.</p>`
      : `<div class="table-wrap"><table id="status-counts">
<caption class="visually-hidden">How many receipts are in each status${summary.truncated ? ` (the latest ${summary.counted})` : ''}</caption>
<thead><tr><th scope="col">Status</th><th scope="col" class="num">Receipts</th></tr></thead>
<tbody>
${rows.map((status) => `<tr data-status="${status}"><th scope="row"><span class="${statusBadgeClass(status)}">${esc(statusLabel(status))}</span> <code>${esc(status)}</code></th><td class="num"><a href="${esc(adminPath('receipts', { status }))}" aria-label="${summary.byStatus[status]} ${esc(statusLabel(status))}: show them">${summary.byStatus[status]}</a></td></tr>`).join('\n')}
</tbody>
</table></div>`,
  );
};

const holdingsSection = async (deps: AppDeps, wallet: string): Promise<Html> => {
  if (!deps.chain) return panel('holdings', 'Holdings', notice('info', '<p>This deployment has no chain configured.</p>'));
  let balances: Awaited<ReturnType<typeof getReserveBalances>>;
  try {
    balances = await getReserveBalances(deps, wallet);
  } catch (error) {
    if (error instanceof DependencyUnavailableError) return panel('holdings', 'Holdings', notice('warning', '<p>The network cannot be reached right now, so balances are not shown. Try again in a minute.</p>'));
    throw error;
  }
  const rows = balances.tokens
    .map(
      (token) => `<tr><th scope="row" data-label="Token">${esc(token.symbol)}</th><td class="num" data-label="In your split">${token.split ? esc(token.split.merchant.display) : '—'}</td><td class="num" data-label="In your wallet">${esc(token.wallet.display)}</td><td class="num" data-label="Value">${token.usdValue === null ? '—' : esc(usd(token.usdValue))}</td></tr>`,
    )
    .join('\n');
  return panel(
    'holdings',
    'Holdings',
    `<p>Your part of what your split holds undistributed, and your wallet’s balance${balances.split ? '' : ' (no split is deployed yet)'}.</p>
${balances.note ? notice('info', `<p>${esc(balances.note[0]!.toUpperCase() + balances.note.slice(1))}.</p>`) : ''}
<div class="table-wrap"><table class="table-cards" id="holdings-table">
<caption class="visually-hidden">Your holdings per token</caption>
<thead><tr><th scope="col">Token</th><th scope="col" class="num">In your split</th><th scope="col" class="num">In your wallet</th><th scope="col" class="num">Value</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot><tr><th scope="row">Total</th><td></td><td></td><td class="num">${esc(usd(balances.totalUsd))}</td></tr></tfoot>
</table></div>
<p class="hint">At block ${balances.blockNumber}. <a href="${adminPath('split')}#balances">Distribute from the split</a></p>`,
  );
};

/** What a new shop still has to do, in the order the service needs it. */
const setupSection = (merchant: Merchant, items: number): Html => {
  const steps = [
    { done: merchant.split !== null, text: 'Deploy your split', href: adminPath('split') },
    { done: items > 0, text: 'Add the items you sell', href: adminPath('inventory') },
    { done: merchant.shop.branding.name !== '', text: 'Name your shop and set its colours', href: `${adminPath('settings')}#branding` },
    { done: merchant.shop.taxDefaults.defaultJurisdictionCode !== null || merchant.shop.taxDefaults.jurisdictions.length > 0, text: 'Set your tax defaults', href: `${adminPath('settings')}#tax` },
  ];
  if (steps.every((step) => step.done)) return '';
  return panel(
    'setup',
    'Set up your shop',
    `<ol class="checklist">
${steps.map((step) => `<li data-done="${step.done}">${step.done ? `<span class="visually-hidden">Done: </span>${esc(step.text)}` : `<a href="${esc(step.href)}">${esc(step.text)}</a>`}</li>`).join('\n')}
</ol>`,
  );
};

const render = async ({ deps, wallet }: PageContext): Promise<Html> => {
  const [merchant, summary, items, holdings] = await Promise.all([
    loadMerchant(deps, wallet),
    summarizeReceipts(deps, wallet),
    listInventory(deps, wallet, InventoryListQuery.parse({ limit: '1' })),
    holdingsSection(deps, wallet),
  ]);
  return [setupSection(merchant, items.total), todaySection(summary), statusSection(summary), holdings].join('\n');
};

export const overviewPage: AdminPage = {
  slug: '',
  label: 'Overview',
  intro: "Today's payments, your receipts by status and what you hold.",
  render,
};
