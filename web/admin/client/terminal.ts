/**
 * Terminal: the page's browser part. The amount becomes a receipt; its QR code is shown and the
 * receipt is watched (every 2 s) until it is paid, when the screen turns to "Paid" and says so.
 */
import { isPaidStatus, statusBadgeClass, statusLabel } from '../receipt-labels';
import { api, busy, byId, clearErrors, say, showError, status } from './kit';

const POLL_MS = 2_000;

interface Sale {
  receipt: { receiptId: string; status: string; customerTotalUsd: number };
  paymentUrl: string;
  qrUrl: string;
}

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** The service's absolute URL as a path on this origin (the page's CSP allows images from here only). */
const sameOrigin = (url: string) => {
  const parsed = new URL(url, location.href);
  return parsed.pathname + parsed.search;
};

export const enhanceTerminal = (): void => {
  const form = byId<HTMLFormElement>('terminal-form');
  const sale = byId('sale');
  if (!form || !sale) return;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const amountInput = form.elements.namedItem('amountUsd') as HTMLInputElement;
  const labelInput = form.elements.namedItem('label') as HTMLInputElement;
  const badge = byId('sale-status')!;
  const note = byId('sale-note')!;
  const paid = byId('sale-paid')!;
  // The amount's panel gives way to the sale screen, and comes back for the next sale.
  const entry = byId('terminal') ?? form;
  let watching: ReturnType<typeof setInterval> | undefined;

  const stopWatching = () => {
    if (watching) clearInterval(watching);
    watching = undefined;
  };

  const show = (next: string) => {
    badge.dataset.status = next;
    badge.className = statusBadgeClass(next);
    badge.textContent = statusLabel(next);
  };

  const watch = (receiptId: string, total: string) => {
    const url = (form.dataset.poll ?? '').replace('{id}', encodeURIComponent(receiptId));
    let busyPoll = false;
    watching = setInterval(async () => {
      if (busyPoll) return;
      busyPoll = true;
      const answer = await api<{ status: string }>('GET', url);
      busyPoll = false;
      if (!answer.ok || answer.json.status === badge.dataset.status) return;
      show(answer.json.status);
      if (isPaidStatus(answer.json.status)) {
        stopWatching();
        note.textContent = `Paid: ${total} received.`;
        byId('sale-paid-text')!.textContent = `Paid ${total}`;
        byId('sale-title')!.textContent = `Paid ${total}`;
        paid.hidden = false;
        sale.classList.add('is-paid');
        paid.focus();
        say(`Paid: ${total} received.`);
      } else if (answer.json.status === 'failed') {
        stopWatching();
        note.textContent = 'The payment failed. Start a new sale.';
        say('The payment failed.');
      } else {
        note.textContent = `${statusLabel(answer.json.status)}…`;
      }
    }, POLL_MS);
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const text = amountInput.value.trim().replace(/^\$/, '');
    const amountUsd = Number(text);
    if (!text || !Number.isFinite(amountUsd) || amountUsd <= 0) {
      showError(form, { status: 400, json: { error: 'invalid_input', message: 'amountUsd: enter an amount in dollars, like 12.50', field: 'amountUsd' } });
      return;
    }
    const done = busy(submit, 'Creating the receipt…');
    status('terminal-form', 'Creating the receipt…');
    const label = labelInput.value.trim();
    const answer = await api<Sale>('POST', form.dataset.url ?? '', { amountUsd, ...(label && { label }) });
    done();
    status('terminal-form', '');
    if (!answer.ok) {
      showError(form, answer);
      return;
    }
    const { receipt, paymentUrl, qrUrl } = answer.json;
    const total = usd.format(receipt.customerTotalUsd);
    stopWatching();
    show(receipt.status);
    byId('sale-title')!.textContent = `Scan to pay ${total}`;
    const image = byId<HTMLImageElement>('sale-qr')!;
    image.src = sameOrigin(qrUrl);
    image.alt = `QR code of the payment link for ${total}`;
    const link = byId<HTMLAnchorElement>('sale-link')!;
    link.href = paymentUrl;
    link.textContent = paymentUrl;
    const receiptLink = byId<HTMLAnchorElement>('sale-receipt')!;
    receiptLink.href = `${form.dataset.receipts ?? ''}?id=${encodeURIComponent(receipt.receiptId)}`;
    receiptLink.textContent = receipt.receiptId;
    note.textContent = 'Waiting for the payment…';
    paid.hidden = true;
    sale.classList.remove('is-paid');
    entry.hidden = true;
    sale.hidden = false;
    sale.dataset.receipt = receipt.receiptId;
    sale.focus();
    say(`Receipt for ${total} ready: show the QR code to the buyer.`);
    watch(receipt.receiptId, total);
  });

  byId('sale-new')?.addEventListener('click', () => {
    stopWatching();
    sale.hidden = true;
    entry.hidden = false;
    form.reset();
    amountInput.focus();
  });
};
