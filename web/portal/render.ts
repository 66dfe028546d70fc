/**
 * The buyer's payment page, rendered on the server: everything the buyer needs to read (the shop,
 * every line, the total, the status and what it means) is in the markup, so the page works without
 * its script; the script (client.ts) adds the wallet payment. Every merchant-supplied string goes
 * through `escapeHtml`; the page carries no inline script or style (its CSP allows neither).
 */
import { escapeHtml } from '../../shared/domain/html';
import { PROCESSING_FEE_LABEL, TAX_LABEL } from '../../shared/domain/pricing';
import type { PortalView } from '../../shared/domain/portal-views';
import { formatUsd, formatUtc, isSettled, PARTLY_PAID, remainingUnits, shortHex, shownQuote, shownUnits, statusLabels, transactionUrl } from './format';

export interface PageAssets {
  /** The content-hashed script and stylesheet (paths on this origin). */
  script: string;
  style: string;
}

export interface PortalPageInput extends PageAssets {
  /** The block explorer's base, for transaction links; null: hashes are shown without a link. */
  explorerUrl: string | null;
  /** The receipt's payment link (`/pay/<id>`), as the merchant sent it. */
  paymentUrl: string;
  /** The QR code route of this receipt (`?token=` picks the quote it encodes). */
  qrUrl: string;
  /** The portal's JSON routes for this receipt (`/api/portal/<id>`), for the script. */
  apiUrl: string;
}

type Html = string;

const attributes = (values: Record<string, string | number | boolean | null | undefined>): string =>
  Object.entries(values)
    .filter(([, value]) => value !== null && value !== undefined && value !== false)
    .map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeHtml(value)}"`))
    .join('');

const cents = (usd: number) => Math.round(usd * 100);

/** A `<time>` in UTC; the script shows it in the buyer's own time zone. */
const time = (ms: number): Html => `<time datetime="${new Date(ms).toISOString()}" data-local-time>${escapeHtml(formatUtc(ms))}</time>`;

/** The line's detail under its label: quantity and unit price, or the tax rate and jurisdiction. */
const lineDetail = (line: PortalView['lineItems'][number], view: PortalView): string | null => {
  if (line.label === TAX_LABEL && view.taxRate !== null) {
    const rate = `${Number((view.taxRate * 100).toFixed(4))} %`;
    return view.jurisdictionCode ? `${rate} · ${view.jurisdictionCode}` : rate;
  }
  if (line.unitPriceUsd !== undefined) return `${line.qty ?? 1} × ${formatUsd(line.unitPriceUsd)}`;
  if (line.qty !== undefined && line.qty !== 1) return `Qty ${line.qty}`;
  return null;
};

/**
 * The rows the buyer pays for: the receipt's lines and, where the service adds its fee on top of a
 * merchant's own total (receipts made through the API carry no fee line), that fee as a row of its own,
 * so the rows always add up to the total shown.
 */
export const pricedRows = (view: PortalView): Array<{ label: string; detail: string | null; usd: number; fee: boolean }> => {
  const rows = view.lineItems.map((line) => ({
    label: line.label,
    detail: lineDetail(line, view),
    usd: line.priceUsd,
    fee: line.label === TAX_LABEL || line.label === PROCESSING_FEE_LABEL,
  }));
  const missing = cents(view.customerTotalUsd) - cents(view.totalUsd);
  if (missing > 0 && !view.lineItems.some((line) => line.label === PROCESSING_FEE_LABEL)) {
    rows.push({ label: PROCESSING_FEE_LABEL, detail: null, usd: missing / 100, fee: true });
  }
  return rows;
};

const linesSection = (view: PortalView): Html => {
  const rows = pricedRows(view).map(
    (row) =>
      `<tr${row.fee ? ' class="line-fee"' : ''}><th scope="row"><span class="line-label">${escapeHtml(row.label)}</span>${
        row.detail ? `<span class="line-detail">${escapeHtml(row.detail)}</span>` : ''
      }</th><td>${escapeHtml(formatUsd(row.usd))}</td></tr>`,
  );
  return `<section class="card lines" aria-labelledby="lines-title">
<h2 id="lines-title">Order details</h2>
<table>
<thead class="visually-hidden"><tr><th scope="col">Item</th><th scope="col">Amount</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
<tfoot><tr class="line-total"><th scope="row">Total</th><td>${escapeHtml(formatUsd(view.customerTotalUsd))}</td></tr></tfoot>
</table>
</section>`;
};

type Tone = 'neutral' | 'success' | 'warning' | 'danger';

const toneOf = (view: PortalView): Tone => {
  if (isSettled(view.status)) return 'success';
  if (view.underpaid) return 'warning';
  if (view.status === 'failed') return 'danger';
  if (view.status === 'refund_requested' || view.status === 'refunded' || !view.payable) return 'warning';
  return 'neutral';
};

/** The status as a word, and what it means for the buyer. */
const summarySection = (view: PortalView): Html => `<section class="card summary" aria-labelledby="total-title">
<h2 id="total-title" class="summary-label">${view.payable ? 'Amount due' : 'Total'}</h2>
<p class="summary-total">${escapeHtml(formatUsd(view.customerTotalUsd))} <span class="summary-currency">${escapeHtml(view.currency)}</span></p>
<p class="summary-meta"><span class="badge badge-${toneOf(view)}" id="status-badge">${escapeHtml(view.underpaid && !isSettled(view.status) ? PARTLY_PAID : statusLabels[view.status])}</span> <span class="summary-ref">Receipt ${escapeHtml(view.receiptId)}</span></p>
${view.payable ? `<p class="summary-expiry" id="summary-expiry">Pay by ${time(view.expiresAt)}</p>` : ''}
</section>`;

const panel = (tone: Tone, title: string, body: Html[], id = 'state'): Html =>
  `<section class="card state state-${tone}" id="${id}" aria-labelledby="${id}-title">
<h2 id="${id}-title">${escapeHtml(title)}</h2>
${body.join('\n')}
</section>`;

const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`;

/** The transaction: a link to the explorer where there is one, else the hash (shortened, whole in its title). */
const transaction = (hash: string, explorerUrl: string | null): Html => {
  const url = transactionUrl(explorerUrl, hash);
  return url
    ? `<p><a class="tx-link" href="${escapeHtml(url)}" rel="noreferrer noopener" target="_blank">View the transaction <span class="mono">${escapeHtml(shortHex(hash))}</span></a></p>`
    : `<p>Transaction <span class="mono" title="${escapeHtml(hash)}">${escapeHtml(shortHex(hash))}</span></p>`;
};

/** The receipt's signed proof (`GET /api/portal/{id}/proof`), saved as a file the buyer can verify without the service. */
const proofLink = (view: PortalView, input: PortalPageInput): Html =>
  `<p><a class="proof-link" href="${escapeHtml(`${input.apiUrl}/proof`)}" download="${escapeHtml(`receipt-${view.receiptId}.json`)}" type="application/json">Download receipt</a></p>`;

const paidPanel = (view: PortalView, input: PortalPageInput): Html => {
  const payment = view.payment;
  const token = view.tokens.find((candidate) => candidate.symbol === payment?.token);
  const amount = payment?.amount && token ? `${shownUnits(payment.amount, token.decimals)} ${token.symbol}` : formatUsd(view.customerTotalUsd);
  return panel('success', 'Payment received', [
    paragraph(`Thank you. ${view.shop.name} received ${amount}.`),
    ...(payment?.paidAt ? [`<p>Paid ${time(payment.paidAt)}</p>`] : []),
    ...(payment?.transactionHash ? [transaction(payment.transactionHash, input.explorerUrl)] : []),
    proofLink(view, input),
  ]);
};

const notPayableText: Record<Exclude<PortalView['notPayableReason'], null | 'paid' | 'refunded'>, [string, string]> = {
  split_required: ['This shop cannot take payments yet', 'Please contact the shop: its payment account is not set up.'],
  no_chain: ['Payments are not available right now', 'Please try again later, or contact the shop.'],
  expired: ['This payment link has expired', 'Ask the shop for a new payment link.'],
  not_payable: ['This receipt cannot be paid', 'Please contact the shop.'],
};

/**
 * The status-specific state, when there is one: paid (with the transaction), refunds, failed (why,
 * and whether the buyer may retry), not payable, a payment only partly received, a payment being
 * confirmed. Null while the receipt simply awaits payment.
 */
export const statePanel = (view: PortalView, input: PortalPageInput): Html | null => {
  if (isSettled(view.status)) return paidPanel(view, input);
  if (view.status === 'refund_requested') return panel('warning', 'Refund in progress', [paragraph(`${view.shop.name} has started a refund of this payment to your wallet.`)]);
  if (view.status === 'refunded') return panel('warning', 'Refunded', [paragraph('This payment was refunded to your wallet.')]);
  const reason = view.notPayableReason;
  if (view.status === 'failed') {
    const retry = view.payable ? 'You can try again below.' : reason && reason in notPayableText ? notPayableText[reason as keyof typeof notPayableText][1] : 'Please contact the shop.';
    return panel('danger', 'Payment failed', [
      ...(view.failure ? [paragraph(view.failure.reason), paragraph(view.failure.action)] : []),
      paragraph(retry),
    ]);
  }
  if (reason && reason in notPayableText) {
    const [title, text] = notPayableText[reason as keyof typeof notPayableText];
    return panel('warning', title, [paragraph(text)]);
  }
  if (view.underpaid) {
    const { token, received, expected } = view.underpaid;
    const decimals = view.tokens.find((candidate) => candidate.symbol === token)?.decimals ?? 0;
    return panel('warning', 'Part of the payment arrived', [
      paragraph(`Received ${shownUnits(received, decimals)} of ${shownUnits(expected, decimals)} ${token}.`),
      `<p class="emphasis">Send the remaining ${escapeHtml(remainingUnits(received, expected, decimals))} ${escapeHtml(token)} to complete the payment.</p>`,
    ]);
  }
  if (view.status === 'checkout_success') return panel('neutral', 'Confirming your payment', [paragraph('Your payment was sent. This page updates when the network confirms it.')]);
  return null;
};

/** The token the page offers first: the open quote's, else the shop's reserve recommendation, else the first stablecoin, else the first token. */
export const defaultToken = (view: PortalView): string | undefined =>
  view.quote?.token ??
  view.tokens.find((token) => token.symbol === view.recommendedToken)?.symbol ??
  view.tokens.find((token) => token.symbol !== 'ETH')?.symbol ??
  view.tokens[0]?.symbol;

const tokenChoice = (view: PortalView, selected: string | undefined): Html => {
  const options = view.tokens.map((token) => {
    const quoted = view.quote?.token === token.symbol ? shownQuote(view.quote) : '';
    return `<label class="token"><input type="radio" name="token" value="${escapeHtml(token.symbol)}"${token.symbol === selected ? ' checked' : ''}><span class="token-symbol">${escapeHtml(
      token.symbol,
    )}</span><span class="token-amount" data-amount-for="${escapeHtml(token.symbol)}">${escapeHtml(quoted)}</span></label>`;
  });
  return `<fieldset class="tokens"><legend>Choose how to pay</legend>
${options.join('\n')}
</fieldset>`;
};

/**
 * The QR code the page shows without its script: the open quote's EIP-681 request, which a phone
 * wallet pays as it is; with no quote open (only the script's POST makes one, never a GET), the
 * payment link, which opens this page in the phone wallet's own browser.
 */
const noscriptQr = (view: PortalView, input: PortalPageInput): Html => {
  const quote = view.quote;
  const [how, src, alt, caption] = quote
    ? ['scan this QR code with your phone’s wallet.', `${input.qrUrl}?token=${encodeURIComponent(quote.token)}`, `QR code: pay ${shownQuote(quote)} from a phone wallet`, shownQuote(quote)]
    : ['scan this QR code to open this page in your phone’s wallet, and pay there.', input.qrUrl, 'QR code: the link to this payment page', 'This payment page'];
  return `<p class="note">Paying from this page needs a browser wallet and JavaScript. You can pay without them: ${escapeHtml(how)}</p>
<figure class="qr"><img class="qr-image" src="${escapeHtml(src)}" width="220" height="220" alt="${escapeHtml(alt)}"><figcaption>${escapeHtml(caption)}</figcaption></figure>`;
};

/**
 * The payment form: the token choice, the quoted amount and its countdown, the QR code, the wallets
 * and the pay button. Without the script it stays hidden and the `<noscript>` part shows a QR code
 * a phone wallet pays or opens the page with.
 */
const paySection = (view: PortalView, input: PortalPageInput): Html => {
  const token = defaultToken(view);
  return `<section class="card pay" id="pay" aria-labelledby="pay-title">
<h2 id="pay-title">Pay with crypto</h2>
<noscript>
${noscriptQr(view, input)}
</noscript>
<form id="pay-form" class="pay-form" hidden novalidate>
${tokenChoice(view, token)}
<div class="quote" id="quote">
<p class="quote-amount"><span class="quote-label">You pay</span> <strong id="quote-amount">${view.quote ? escapeHtml(shownQuote(view.quote)) : '…'}</strong></p>
<p class="quote-expiry" id="quote-expiry"></p>
</div>
<details class="qr-details" id="qr-details">
<summary>Pay from your phone instead</summary>
<figure class="qr"><img class="qr-image" id="qr-image" width="220" height="220" alt="" hidden><figcaption>Scan with your phone’s wallet. The amount and address are filled in for you.</figcaption></figure>
</details>
<div class="wallets" id="wallets">
<p class="wallet-state" id="wallet-state" aria-live="polite">Looking for a browser wallet…</p>
<div class="wallet-list" id="wallet-list"></div>
</div>
<button type="submit" class="button button-primary" id="pay-button" disabled>Pay</button>
</form>
<div class="problem" id="problem" role="alert" hidden><p class="problem-message" id="problem-message"></p><p class="problem-action" id="problem-action"></p></div>
<p class="live" id="live" role="status" aria-live="polite"></p>
</section>`;
};

/**
 * Paying by card: a card on-ramp provider buys the USDC and sends it to the shop's split. The
 * script enables the button and sends the buyer to the provider's checkout; without the script the
 * section says so.
 */
const cardSection = (view: PortalView): Html => `<section class="card pay-by-card" id="card" aria-labelledby="card-title">
<h2 id="card-title">Pay by card</h2>
<p class="note">A card payment provider buys ${escapeHtml(formatUsd(view.customerTotalUsd))} in USDC for you and sends it to ${escapeHtml(view.shop.name)}. The provider may add its own fee.</p>
<noscript><p class="note">Paying by card from this page needs JavaScript.</p></noscript>
<button type="button" class="button" id="card-button" hidden>Pay by card</button>
<p class="live" id="card-state" role="status" aria-live="polite"></p>
</section>`;

/** Shown by the script once the payment is confirmed (the server shows its own when the page loads paid). */
const successSection = (view: PortalView, input: PortalPageInput): Html => `<section class="card state state-success" id="success" aria-labelledby="success-title" tabindex="-1" hidden>
<h2 id="success-title">Payment received</h2>
<p id="success-text"></p>
<p id="success-tx"></p>
${proofLink(view, input)}
</section>`;

const shopHeader = (view: PortalView): Html => {
  const logo = /^https?:\/\//i.test(view.shop.logoUrl) ? `<img class="shop-logo" src="${escapeHtml(view.shop.logoUrl)}" alt="" width="44" height="44">` : '';
  return `<header class="shop">${logo}<h1 class="shop-name">${escapeHtml(view.shop.name)}</h1></header>`;
};

/** The start of every page of the service up to `</head>`: not indexed, no referrer, its stylesheet and (deferred) script. */
export const documentHead = (head: { title: string; style: string; script?: string }): Html => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(head.title)}</title>
<link rel="stylesheet" href="${escapeHtml(head.style)}">
${head.script ? `<script src="${escapeHtml(head.script)}" defer></script>\n` : ''}</head>`;

export const htmlDocument = (head: { title: string; style: string; script?: string }, rootAttributes: string, body: Html): Html => `${documentHead(head)}
<body>
<div class="page"${rootAttributes}>
${body}
</div>
</body>
</html>
`;

/** The complete page for a receipt. Pure: the same view and input give the same markup. */
export const renderPortalPage = (view: PortalView, input: PortalPageInput): Html => {
  const state = statePanel(view, input);
  const root = attributes({
    id: 'portal',
    'data-api': input.apiUrl,
    'data-qr': input.qrUrl,
    'data-status': view.status,
    'data-payable': view.payable ? 'true' : 'false',
    'data-explorer': input.explorerUrl,
    // After an underpayment the script asks only for the rest of the quote in that token.
    'data-underpaid-token': view.underpaid?.token,
    'data-underpaid-received': view.underpaid?.received,
    'data-shop': view.shop.name,
    'data-brand-primary': view.shop.colors.primary,
    'data-brand-accent': view.shop.colors.accent,
    'data-brand-background': view.shop.colors.background,
  });
  const body = [
    shopHeader(view),
    '<main class="sheet">',
    summarySection(view),
    ...(state ? [state] : []),
    ...(view.payable ? [paySection(view, input), ...(view.card ? [cardSection(view)] : []), successSection(view, input)] : []),
    linesSection(view),
    `<p class="footnote">Payment link: <a href="${escapeHtml(input.paymentUrl)}">${escapeHtml(input.paymentUrl)}</a></p>`,
    '</main>',
  ].join('\n');
  return htmlDocument({ title: `Pay ${view.shop.name} · ${view.receiptId}`, style: input.style, script: input.script }, root, body);
};

/** The page for an id no receipt has: the portal's look, no shop (none is known), what to do. */
export const renderNotFoundPage = (input: { style: string; brandName: string }): Html =>
  htmlDocument(
    { title: 'Payment not found', style: input.style },
    ' id="portal"',
    `<header class="shop"><p class="shop-name">${escapeHtml(input.brandName)}</p></header>
<main class="sheet">
<section class="card state state-warning" aria-labelledby="missing-title">
<h1 id="missing-title">We can’t find this payment</h1>
<p>The link may be mistyped, or the receipt was removed.</p>
<p>Check the link you were sent, or ask the shop for a new one.</p>
</section>
</main>`,
  );
