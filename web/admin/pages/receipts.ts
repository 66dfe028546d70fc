/**
 * Receipts: the list (newest first, filtered by status, a page at a time, statuses kept live by the
 * script) and one receipt (`?id=`): its lines and totals, every transaction judged as its payment,
 * its status history, its webhook deliveries with a redeliver button and the key that signs them,
 * and refunds (asked here, sent from the merchant's wallet, verified on chain).
 */
import { listMerchantKeys } from '../../../shared/app/api-keys';
import { listReceipts } from '../../../shared/app/receipts';
import { openRefund, paidByCard, refundableCents } from '../../../shared/app/payments/refunds';
import { listDeliveries } from '../../../shared/app/webhooks';
import { DomainError } from '../../../shared/domain/errors';
import { ID_PATTERN } from '../../../shared/domain/query-params';
import { receiptStatuses, type Receipt, type ReceiptStatus, type Refund } from '../../../shared/domain/receipt';
import { toReceiptDetailView, type PaymentView, type ReceiptDetailView, type ReceiptView } from '../../../shared/domain/receipt-views';
import { formatUnits } from '../../../shared/domain/units';
import { routes } from '../../../shared/http/routes';
import { adminPath, attrs, esc, field, formStatus, notice, panel, shortHex, txLink, usd, utcTime, type AdminPage, type Html, type PageContext } from '../kit';
import { paymentOutcomeClass, paymentOutcomeLabel, statusBadgeClass, statusLabel } from '../receipt-labels';

const PAGE_SIZE = 25;

const badge = (status: string, extra: Record<string, string> = {}) => `<span${attrs({ class: statusBadgeClass(status), ...extra })}>${esc(statusLabel(status))}</span>`;

const sourceLabel: Record<Receipt['source'], string> = { order: 'Order', terminal: 'Terminal', api: 'API' };

const filterForm = (status: string | undefined): Html => `<form class="filter-row" method="get" action="${adminPath('receipts')}">
<div class="field">
<label for="f-status">Status</label>
<select id="f-status" name="status">
<option value=""${status ? '' : ' selected'}>Every status</option>
${receiptStatuses.map((value) => `<option${attrs({ value, selected: value === status })}>${esc(statusLabel(value))} (${esc(value)})</option>`).join('\n')}
</select>
</div>
<button class="button" type="submit">Show</button>
</form>`;

const listView = async ({ deps, wallet, query }: PageContext): Promise<Html> => {
  const status = (receiptStatuses as readonly string[]).includes(query.status ?? '') ? (query.status as ReceiptStatus) : undefined;
  let page: Awaited<ReturnType<typeof listReceipts>>;
  try {
    page = await listReceipts(deps, wallet, { limit: PAGE_SIZE, ...(query.cursor && { cursor: query.cursor }), ...(status && { status }) });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return `${filterForm(status)}${notice('warning', `<p>${esc(error.message)}. <a href="${adminPath('receipts')}">Start from the newest</a>.</p>`)}`;
  }
  const rows = page.receipts
    .map(
      (receipt) => `<tr${attrs({ 'data-receipt': receipt.receiptId })}>
<th scope="row"><a class="mono" href="${esc(adminPath('receipts', { id: receipt.receiptId }))}">${esc(receipt.receiptId)}</a></th>
<td data-label="Status">${badge(receipt.status, { 'data-status': receipt.status })}</td>
<td class="num" data-label="Total">${esc(usd(receipt.customerTotalUsd))}</td>
<td data-label="Created">${utcTime(receipt.createdAt)}</td>
<td data-label="First line">${esc(receipt.lineItems[0]?.label ?? '')}</td>
</tr>`,
    )
    .join('\n');
  const table =
    page.receipts.length === 0
      ? `<p class="empty">${status ? `No receipt is ${esc(statusLabel(status).toLowerCase())} (${esc(status)}).` : 'No receipts yet. Orders, the terminal and your backend’s receipts show up here.'}</p>`
      : `<div class="table-wrap"><table class="receipts-table table-cards">
<caption class="visually-hidden">Receipts, newest first; statuses update by themselves</caption>
<thead><tr><th scope="col">Receipt</th><th scope="col">Status</th><th scope="col" class="num">Total</th><th scope="col">Created</th><th scope="col">First line</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`;
  const pager = `<nav class="pager" aria-label="Pages of receipts">
${query.cursor ? `<a class="button button-small" href="${esc(adminPath('receipts', { status }))}">Newest</a>` : '<span></span>'}
${page.nextCursor ? `<a class="button button-small" href="${esc(adminPath('receipts', { status, cursor: page.nextCursor }))}">Older receipts</a>` : ''}
</nav>`;
  const listUrl = `${routes.consoleReceiptsList.path}?${new URLSearchParams({ limit: String(PAGE_SIZE), ...(status && { status }), ...(query.cursor && { cursor: query.cursor }) }).toString()}`;
  return panel(
    'receipts-list',
    status ? `${statusLabel(status)} (${status})` : 'Newest first',
    `${filterForm(status)}
<p class="hint live-note" id="live-note" data-live-list="${esc(listUrl)}" data-live-receipt="${esc(routes.consoleReceiptsGet.path)}">Statuses update by themselves every few seconds.</p>
${table}
${pager}`,
  );
};

const moneyFacts = (view: ReceiptDetailView): Html => `<dl class="facts">
<dt>Status</dt><dd>${badge(view.status, { id: 'receipt-status', 'data-status': view.status })}</dd>
<dt>Total</dt><dd>${esc(usd(view.totalUsd))}${view.customerTotalUsd !== view.totalUsd ? ` <span class="hint">(the buyer pays ${esc(usd(view.customerTotalUsd))} with the processing fee)</span>` : ''}</dd>
<dt>Created</dt><dd>${utcTime(view.createdAt)}</dd>
<dt>Payment link</dt><dd><a href="${esc(view.paymentUrl)}" rel="noreferrer noopener" target="_blank">${esc(view.paymentUrl)}</a></dd>
${view.depositAddress ? `<dt>Deposit address</dt><dd><span class="mono" id="deposit-address">${esc(view.depositAddress)}</span> <span class="hint">(this receipt’s own: what reaches it is swept to your split)</span></dd>` : ''}
${view.paidAt ? `<dt>Paid</dt><dd>${utcTime(view.paidAt)}${view.token ? ` in ${esc(view.token)}` : ''}${view.buyerWallet ? ` by ${shortHex(view.buyerWallet)}` : ''}</dd>` : ''}
${view.refundedUsd > 0 ? `<dt>Refunded</dt><dd>${esc(usd(view.refundedUsd))}</dd>` : ''}
${view.transactionId ? `<dt>Your reference</dt><dd class="mono">${esc(view.transactionId)}</dd>` : ''}
</dl>`;

const linesTable = (view: ReceiptView): Html => `<div class="table-wrap"><table>
<caption class="visually-hidden">Lines of the receipt</caption>
<thead><tr><th scope="col">Line</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Unit</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>
${view.lineItems.map((line) => `<tr><th scope="row">${esc(line.label)}${line.sku ? ` <span class="hint mono">${esc(line.sku)}</span>` : ''}</th><td class="num">${line.qty ?? ''}</td><td class="num">${line.unitPriceUsd !== undefined ? esc(usd(line.unitPriceUsd)) : ''}</td><td class="num">${esc(usd(line.priceUsd))}</td></tr>`).join('\n')}
</tbody>
<tfoot><tr><th scope="row">Total</th><td></td><td></td><td class="num"><strong>${esc(usd(view.totalUsd))}</strong></td></tr></tfoot>
</table></div>`;

/** Atomic units in whole tokens ("51.02 USDT"); without the token's decimals, as base units. */
const tokenAmount = (units: string, payment: PaymentView): string =>
  payment.decimals !== null ? `${formatUnits(units, payment.decimals)} ${payment.token}` : `${units} base units of ${payment.token}`;

/** One element: on a phone the cell is a grid of its label and its content. */
const amountCell = (payment: PaymentView): Html => {
  if (payment.token === null) return '<span class="hint">nothing moved</span>';
  const due = payment.outcome === 'underpaid' || payment.outcome === 'slippage' ? payment.expected : null;
  return `<span>${esc(tokenAmount(payment.amount, payment))}${due !== null ? ` <span class="hint">of ${esc(tokenAmount(due, payment))} due</span>` : ''}</span>`;
};

/** Every transaction judged for the receipt, oldest first: an underpayment and its top-up are two rows. */
const paymentsTable = (payments: readonly PaymentView[], explorerUrl: string | null): Html =>
  payments.length === 0
    ? '<p class="empty">No payment seen yet: each transaction sent for this receipt shows here, with how it was judged.</p>'
    : `<div class="table-wrap"><table class="table-cards payments-table">
<caption class="visually-hidden">Transactions judged for this receipt, oldest first</caption>
<thead><tr><th scope="col">Transaction</th><th scope="col">Outcome</th><th scope="col" class="num">Amount</th><th scope="col">From</th><th scope="col" class="num">Block</th><th scope="col">Recorded</th></tr></thead>
<tbody>
${payments
  .map(
    (payment) => `<tr${attrs({ 'data-payment': payment.transactionHash, 'data-outcome': payment.outcome })}>
<th scope="row" data-label="Transaction">${payment.transactionHash ? txLink(explorerUrl, payment.transactionHash) : 'ETH by balance'}</th>
<td data-label="Outcome"><span class="${paymentOutcomeClass(payment.outcome)}">${esc(paymentOutcomeLabel(payment.outcome))}</span></td>
<td class="num" data-label="Amount">${amountCell(payment)}</td>
<td data-label="From">${payment.payer ? shortHex(payment.payer) : 'unknown'}</td>
<td class="num" data-label="Block">${payment.blockNumber}</td>
<td data-label="Recorded">${utcTime(payment.recordedAt)}</td>
</tr>`,
  )
  .join('\n')}
</tbody>
</table></div>`;

const actorLabel = { merchant: 'your backend', portal: 'the payment page', service: 'the service' } as const;

const historyTable = (receipt: Receipt): Html =>
  receipt.statusHistory.length === 0
    ? `<p class="empty">No change since it was created (${esc(statusLabel(receipt.status))}).</p>`
    : `<ol class="history">
${receipt.statusHistory
  .map((change) => `<li>${utcTime(change.at)}: ${badge(change.status)} <span class="hint">from ${esc(statusLabel(change.previousStatus))}, by ${esc(actorLabel[change.by])}${change.failureCode ? `, <span class="mono">${esc(change.failureCode)}</span>` : ''}</span></li>`)
  .join('\n')}
</ol>`;

type Deliveries = Awaited<ReturnType<typeof listDeliveries>>;

type KeyViews = Awaited<ReturnType<typeof listMerchantKeys>>['keys'];

/** The key that signed an attempt, by its prefix, marked when it has been revoked since; or the webhook signing secret. */
const signerCell = (attempt: Deliveries['deliveries'][number], keys: KeyViews): Html => {
  if (attempt.signedWithSecret) return `<span class="mono" title="Your webhook signing secret">${esc(attempt.signedWithSecret)}…</span>`;
  const key = attempt.signedBy ? keys.find((candidate) => candidate.id === attempt.signedBy) : undefined;
  if (!key) return '<span class="empty">none</span>';
  return `<span class="mono">${esc(key.prefix)}…</span>${key.status === 'revoked' ? ' <span class="badge badge-danger">revoked</span>' : ''}`;
};

const deliveriesPanel = (receiptId: string, log: Deliveries, keys: KeyViews): Html => {
  const signing = log.signingKey;
  const secret = log.signingSecret;
  const keyNote = !signing
    ? secret
      ? `<p class="hint">No API key made this receipt: its webhooks are signed with your webhook signing secret <span class="mono">${esc(secret.prefix)}…</span>${secret.previous ? `, and the previous one, <span class="mono">${esc(secret.previous.prefix)}…</span>, beside it until ${utcTime(secret.previous.until)}` : ''}.</p>`
      : notice('warning', `<p>No API key made this receipt, and your shop has no webhook signing secret yet, so its webhooks cannot be sent. <a href="${adminPath('settings')}#webhook">Make one in Settings</a>, then redeliver.</p>`)
    : signing.revoked
      ? notice('warning', `<p id="revoked-signer"><strong>Signed by a revoked key</strong> (<span class="mono">${esc(signing.prefix)}…</span>). Its webhooks still verify with that key. <a href="${adminPath('api-keys')}">Roll the key</a> to sign them with one of your active keys.</p>`)
      : `<p class="hint">Signed with your key <span class="mono">${esc(signing.prefix)}…</span>: your receiver verifies the signature with that key.</p>`;
  const events = new Map<string, Deliveries['deliveries']>();
  for (const attempt of log.deliveries) events.set(attempt.eventId, [...(events.get(attempt.eventId) ?? []), attempt]);
  const rows = [...events.entries()]
    .map(([eventId, attempts]) => {
      const url = routes.consoleReceiptsRedeliver.path.replace('{id}', encodeURIComponent(receiptId)).replace('{eventId}', encodeURIComponent(eventId));
      return attempts
        .map(
          (attempt, index) => `<tr>
<th scope="row"><span class="mono" title="${esc(eventId)}">${esc(eventId.slice(0, 8))}</span> #${attempt.attempt}</th>
<td data-label="Sent">${utcTime(attempt.at)}</td>
<td data-label="Outcome">${attempt.state === 'delivered' ? '<span class="badge badge-success">Delivered</span>' : attempt.state === 'failed' ? '<span class="badge badge-danger">Failed</span>' : '<span class="badge">Sending</span>'}</td>
<td data-label="Answer">${attempt.httpStatus !== null ? `HTTP ${attempt.httpStatus}` : ''}${attempt.error ? ` <span class="hint">${esc(attempt.error)}</span>` : ''}</td>
<td class="num" data-label="Time">${attempt.durationMs !== null ? `${attempt.durationMs} ms` : ''}</td>
<td data-label="Signed by">${signerCell(attempt, keys)}</td>
<td>${
            index === attempts.length - 1
              ? `<button class="button button-small" type="button"${attrs({ 'data-redeliver': url, 'aria-label': `Redeliver event ${eventId.slice(0, 8)}` })}>Redeliver</button>`
              : ''
          }</td>
</tr>`,
        )
        .join('\n');
    })
    .join('\n');
  const table =
    log.deliveries.length === 0
      ? '<p class="empty">No webhook sent yet: one goes out on every status change to the receipt’s webhook URL, else your shop’s.</p>'
      : `<div class="table-wrap"><table class="table-cards">
<caption class="visually-hidden">Webhook delivery attempts, oldest first</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Sent</th><th scope="col">Outcome</th><th scope="col">Answer</th><th scope="col" class="num">Time</th><th scope="col">Signed by</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`;
  return panel('deliveries', 'Webhook deliveries', `${keyNote}${table}${formStatus('deliveries')}`);
};

const refundCall = (refund: Refund): Record<string, string> => ({
  'data-refund-to': refund.to,
  'data-refund-from': refund.from,
  'data-refund-amount': refund.amount,
  'data-refund-token': refund.tokenAddress ?? '',
  'data-refund-symbol': refund.token,
});

const refundsPanel = (receipt: Receipt, view: ReceiptView, explorerUrl: string | null): Html => {
  const open = openRefund(receipt);
  const leftCents = refundableCents(receipt);
  const canAsk = !open && leftCents > 0 && (receipt.status === 'paid' || receipt.status === 'reconciled' || receipt.status === 'refunded');
  const past = (receipt.refunds ?? []).filter((refund) => refund.txHash !== null);
  const done = past.length
    ? `<ul class="refunds">${past.map((refund) => `<li>${esc(usd(refund.amountUsd))} in ${esc(refund.token)}, ${refund.refundedAt ? `verified ${utcTime(refund.refundedAt)}` : 'being verified'}: ${txLink(explorerUrl, refund.txHash!)}</li>`).join('')}</ul>`
    : '';
  const reportForm = `<form id="refund-report" novalidate${attrs({ 'data-url': routes.receiptsRefundReport.path, 'data-receipt': view.receiptId })}>
${field({ name: 'txHash', label: 'Already sent it? The transaction hash', hint: 'The service checks it on chain, then the receipt is refunded.', placeholder: '0x…', maxlength: 66 })}
<div class="actions"><button class="button" type="submit">Check the transaction</button></div>
${formStatus('refund-report')}
</form>`;
  const sendBlock = (refund: Refund) => `<div id="refund-open" class="refund-open">
${notice('info', `<p><strong>Send ${esc(refund.token)} to the buyer from your wallet.</strong> ${esc(usd(refund.amountUsd))}: <span class="mono">${esc(refund.amount)}</span> base units of ${esc(refund.token)} from ${shortHex(refund.from)} to ${shortHex(refund.to)}.</p>`)}
<div class="actions"><button class="button button-primary" type="button" id="refund-send"${attrs(refundCall(refund))}>Send the refund from my wallet</button></div>
<ol class="steps" id="refund-steps" hidden>
<li data-step="connect">Connect your wallet</li>
<li data-step="confirm">Confirm the transfer in your wallet</li>
<li data-step="mine">Wait for the network</li>
<li data-step="verify">The service verifies it</li>
</ol>
${formStatus('refund-send')}
${reportForm}
</div>`;
  let body: Html;
  if (open) body = sendBlock(open);
  else if (canAsk && paidByCard(receipt))
    body = notice('info', `<p id="refund-by-card"><strong>Paid by card through ${esc(receipt.onramp!.provider)}.</strong> Refund it in the provider's dashboard: the USDC came from the provider's wallet, so a transfer back would not reach the buyer's card.</p>`);
  else if (canAsk)
    body = `<form id="refund-ask" novalidate${attrs({ 'data-url': routes.receiptsRefund.path, 'data-receipt': view.receiptId })}>
<p>Refunds go back to the buyer in the token that paid, from your wallet. Up to ${esc(usd(leftCents / 100))} is left to refund.</p>
<div class="fields fields-2">
${field({ name: 'amountUsd', label: 'Amount (USD)', hint: `Empty: all ${usd(leftCents / 100)}.`, type: 'text', inputmode: 'decimal', placeholder: (leftCents / 100).toFixed(2) })}
${field({ name: 'reason', label: 'Reason (for your records)', maxlength: 500 })}
</div>
<div class="actions"><button class="button button-primary" type="submit">Ask for the refund</button></div>
${formStatus('refund-ask')}
</form>
<div id="refund-next" hidden></div>`;
  else body = `<p class="empty">${view.status === 'paid' || view.status === 'reconciled' || view.status === 'refunded' ? 'Refunded in full.' : 'A receipt can be refunded once it is paid.'}</p>`;
  return panel('refunds', 'Refund', `${done}${body}`);
};

const detailView = async ({ deps, wallet, query }: PageContext): Promise<Html> => {
  const id = query.id ?? '';
  const stored = ID_PATTERN.test(id) ? await deps.receipts.get(wallet, id) : undefined;
  const back = `<p><a href="${adminPath('receipts')}">← All receipts</a></p>`;
  if (!stored) return `${back}${notice('warning', `<p>You have no receipt ${esc(id)}.</p>`, { alert: true })}`;
  const receipt = stored.value;
  const view = toReceiptDetailView(receipt, deps.settings.baseUrl, deps.settings.tokens);
  const [log, { keys }] = await Promise.all([listDeliveries(deps, wallet, id), listMerchantKeys(deps, wallet)]);
  return `${back}
<div id="receipt"${attrs({ 'data-receipt': id, 'data-poll': routes.consoleReceiptsGet.path.replace('{id}', encodeURIComponent(id)), 'data-chain-id': deps.settings.chainId, 'data-payments': view.payments.length })}>
${panel('summary', id, `${moneyFacts(view)}<div id="status-changed" class="notice notice-info" role="status" hidden></div>`)}
${panel('lines', 'Lines', linesTable(view))}
${panel('payments', 'Payments', paymentsTable(view.payments, deps.settings.payments.explorerUrl))}
${panel('history', 'Status history', historyTable(receipt))}
${deliveriesPanel(id, log, keys)}
${refundsPanel(receipt, view, deps.settings.payments.explorerUrl)}
</div>`;
};

export const receiptsPage: AdminPage = {
  slug: 'receipts',
  label: 'Receipts',
  intro: 'Every receipt with its live status, its events and webhook deliveries, and refunds.',
  render: async (context) => (context.query.id ? detailView(context) : listView(context)),
};
