/**
 * Receipts: the page's browser part. The list and the receipt keep their status badges live (the
 * console's JSON routes, polled while the tab is visible), and the receipt announces a payment
 * recorded since the page was drawn; a delivery is sent again with progress;
 * a refund is asked, sent from the signed-in wallet (each step shown) and reported for verification.
 */
import { statusBadgeClass, statusLabel } from '../receipt-labels';
import { refundTransaction } from '../refund-call';
import { api, busy, byId, clearErrors, reloadWith, say, showError, status } from './kit';
import { WalletProblem, connectSignedIn, waitForReceipt, walletMessage } from './wallet';

const LIST_POLL_MS = 5_000;
const RECEIPT_POLL_MS = 3_000;

interface ReceiptAnswer {
  receiptId: string;
  status: string;
  /** One receipt's answer only (the list carries none). */
  payments?: unknown[];
}

const setBadge = (badge: HTMLElement, next: string) => {
  badge.dataset.status = next;
  badge.className = statusBadgeClass(next);
  badge.textContent = statusLabel(next);
};

/** Runs `tick` every `ms` while the tab is visible (and once when it becomes visible again). */
const every = (ms: number, tick: () => Promise<void>) => {
  let running = false;
  const run = async () => {
    if (running || document.hidden) return;
    running = true;
    try {
      await tick();
    } finally {
      running = false;
    }
  };
  setInterval(() => void run(), ms);
  document.addEventListener('visibilitychange', () => void run());
};

const liveList = () => {
  const note = byId('live-note');
  const url = note?.dataset.liveList;
  const one = note?.dataset.liveReceipt;
  if (!url) return;
  const show = (receipt: ReceiptAnswer) => {
    const badge = document.querySelector<HTMLElement>(`tr[data-receipt="${CSS.escape(receipt.receiptId)}"] [data-status]`);
    if (badge && badge.dataset.status !== receipt.status) {
      setBadge(badge, receipt.status);
      say(`Receipt ${receipt.receiptId} is now ${statusLabel(receipt.status)}.`);
    }
  };
  every(LIST_POLL_MS, async () => {
    const answer = await api<{ receipts: ReceiptAnswer[] }>('GET', url);
    if (!answer.ok) return;
    answer.json.receipts.forEach(show);
    // A row the list no longer answers (its status left the filter, or newer receipts pushed it off) is read by itself.
    const listed = new Set(answer.json.receipts.map((receipt) => receipt.receiptId));
    const missing = [...document.querySelectorAll<HTMLElement>('tr[data-receipt]')].map((row) => row.dataset.receipt!).filter((id) => !listed.has(id));
    if (!one) return;
    for (const id of missing) {
      const single = await api<ReceiptAnswer>('GET', one.replace('{id}', encodeURIComponent(id)));
      if (single.ok) show(single.json);
    }
  });
};

const liveReceipt = (root: HTMLElement) => {
  const badge = byId('receipt-status');
  const changed = byId('status-changed');
  const url = root.dataset.poll;
  if (!badge || !changed || !url) return;
  // An underpayment changes no status: a new row in the payments table is announced the same way.
  let shownPayments = Number(root.dataset.payments ?? '0');
  every(RECEIPT_POLL_MS, async () => {
    const answer = await api<ReceiptAnswer>('GET', url);
    if (!answer.ok) return;
    const payments = answer.json.payments?.length ?? shownPayments;
    const statusChanged = answer.json.status !== badge.dataset.status;
    if (!statusChanged && payments === shownPayments) return;
    const news = statusChanged ? `The receipt is now ${statusLabel(answer.json.status)}.` : 'A payment was recorded.';
    shownPayments = payments;
    setBadge(badge, answer.json.status);
    changed.textContent = '';
    const text = document.createElement('p');
    text.textContent = `${news} `;
    const reload = document.createElement('button');
    reload.type = 'button';
    reload.className = 'button button-small';
    reload.textContent = 'Show the details';
    reload.addEventListener('click', () => location.reload());
    text.append(reload);
    changed.append(text);
    changed.hidden = false;
    say(news);
  });
};

interface Redelivered {
  attempt: number;
  delivered: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

const redeliveries = () => {
  for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-redeliver]')) {
    button.addEventListener('click', async () => {
      const done = busy(button, 'Sending…');
      status('deliveries', 'Sending the event again…');
      const answer = await api<Redelivered>('POST', button.dataset.redeliver ?? '');
      if (!answer.ok) {
        done();
        status('deliveries', '');
        const box = byId('deliveries-error');
        if (box) {
          box.textContent = answer.json.message;
          box.hidden = false;
        }
        say(answer.json.message);
        return;
      }
      const outcome = answer.json.delivered
        ? `Delivered again (attempt ${answer.json.attempt}): HTTP ${answer.json.httpStatus} in ${answer.json.durationMs} ms.`
        : `Not delivered (attempt ${answer.json.attempt}): ${answer.json.httpStatus !== null ? `HTTP ${answer.json.httpStatus}` : (answer.json.error ?? 'no answer')}.`;
      reloadWith(outcome);
    });
  }
};

const askRefund = (form: HTMLFormElement) => {
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const amount = (form.elements.namedItem('amountUsd') as HTMLInputElement).value.trim();
    const reason = (form.elements.namedItem('reason') as HTMLInputElement).value.trim();
    const body: Record<string, unknown> = { id: form.dataset.receipt };
    if (amount) {
      const usd = Number(amount.replace(/^\$/, ''));
      if (!Number.isFinite(usd) || usd <= 0) {
        showError(form, { status: 400, json: { error: 'invalid_input', message: 'amountUsd: enter an amount in dollars, like 12.50', field: 'amountUsd' } });
        return;
      }
      body.amountUsd = usd;
    }
    if (reason) body.reason = reason;
    const done = busy(submit, 'Asking…');
    const answer = await api('POST', form.dataset.url ?? '', body);
    if (!answer.ok) {
      done();
      showError(form, answer);
      return;
    }
    reloadWith('Refund asked. Now send it from your wallet.');
  });
};

type Outcome = { outcome: 'refunded' | 'unconfirmed' | 'pending' };

const afterReport = (answer: Outcome, formId: string) => {
  if (answer.outcome === 'refunded') {
    reloadWith('Refund verified on chain: the receipt is refunded.');
    return;
  }
  status(formId, 'Sent. The service confirms it once the network has enough confirmations; this page updates by itself.');
  say('Refund sent; waiting for confirmations.');
};

const reportRefund = (form: HTMLFormElement) => {
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const txHash = (form.elements.namedItem('txHash') as HTMLInputElement).value.trim();
    const done = busy(submit, 'Checking…');
    const answer = await api<Outcome>('POST', form.dataset.url ?? '', { id: form.dataset.receipt, txHash });
    done();
    if (!answer.ok) {
      showError(form, answer);
      return;
    }
    afterReport(answer.json, form.id);
  });
};

const step = (list: HTMLElement, name: string) => {
  let reached = false;
  for (const item of list.querySelectorAll<HTMLElement>('li[data-step]')) {
    if (item.dataset.step === name) {
      item.dataset.state = 'active';
      reached = true;
    } else item.dataset.state = reached ? '' : 'done';
  }
};

const sendRefund = (button: HTMLButtonElement, report: HTMLFormElement | null) => {
  const steps = byId('refund-steps');
  button.addEventListener('click', async () => {
    const box = byId('refund-send-error');
    if (box) box.hidden = true;
    const done = busy(button, 'Sending…');
    if (steps) {
      steps.hidden = false;
      step(steps, 'connect');
    }
    try {
      const chainId = Number(document.body.dataset.chainId);
      const { provider, account } = await connectSignedIn(document.body.dataset.wallet ?? '', chainId);
      if (steps) step(steps, 'confirm');
      status('refund-send', 'Confirm the transfer in your wallet.');
      const transaction = refundTransaction({ from: account, to: button.dataset.refundTo ?? '', amount: button.dataset.refundAmount ?? '', tokenAddress: button.dataset.refundToken ?? '' });
      const hash = (await provider.request({ method: 'eth_sendTransaction', params: [transaction] })) as string;
      if (steps) step(steps, 'mine');
      status('refund-send', `Sent (${hash.slice(0, 10)}…). Waiting for the network…`);
      await waitForReceipt(provider, hash);
      if (steps) step(steps, 'verify');
      status('refund-send', 'Mined. The service is checking it…');
      const answer = await api<Outcome>('POST', report?.dataset.url ?? '', { id: report?.dataset.receipt, txHash: hash });
      if (!answer.ok) throw new WalletProblem(`The service did not accept the refund’s transaction: ${answer.json.message}`);
      afterReport(answer.json, 'refund-send');
      done();
    } catch (error) {
      done();
      status('refund-send', '');
      const text = walletMessage(error);
      if (box) {
        box.textContent = text;
        box.hidden = false;
      }
      say(text);
    }
  });
};

export const enhanceReceipts = (): void => {
  liveList();
  const root = byId('receipt');
  if (!root) return;
  liveReceipt(root);
  redeliveries();
  const ask = byId<HTMLFormElement>('refund-ask');
  if (ask) askRefund(ask);
  const report = byId<HTMLFormElement>('refund-report');
  if (report) reportRefund(report);
  const send = byId<HTMLButtonElement>('refund-send');
  if (send) sendRefund(send, report);
};
