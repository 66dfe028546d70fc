/** Webhooks: the page's browser part: the test event is sent with progress and its outcome shown. */
import { api, busy, byId, clearErrors, say, showError, status } from './kit';

interface Outcome {
  eventId: string;
  delivered: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

const setText = (id: string, text: string) => {
  const element = byId(id);
  if (element) element.textContent = text;
};

export const enhanceWebhooks = (): void => {
  const form = byId<HTMLFormElement>('webhook-test-form');
  const outcome = byId('webhook-outcome');
  if (!form || !outcome) return;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const url = (form.elements.namedItem('url') as HTMLInputElement).value.trim();
    const keys = form.elements.namedItem('keyId') as HTMLSelectElement;
    if (!url) {
      showError(form, { status: 400, json: { error: 'invalid_input', message: 'url: enter the URL your receiver listens on', field: 'url' } });
      return;
    }
    outcome.hidden = true;
    const done = busy(submit, 'Sending…');
    status('webhook-test-form', 'Sending the test event and waiting for your receiver (up to 5 seconds)…');
    // No key chosen: the shop's webhook signing secret signs, as for the receipts made here.
    const answer = await api<Outcome>('POST', form.dataset.url ?? '', keys.value ? { url, keyId: keys.value } : { url });
    done();
    status('webhook-test-form', '');
    if (!answer.ok) {
      showError(form, answer);
      return;
    }
    const result = answer.json;
    const box = byId('webhook-outcome-notice')!;
    box.className = result.delivered ? 'notice notice-success' : 'notice notice-danger';
    box.textContent = result.delivered ? 'Delivered: your receiver answered 2xx.' : `Not delivered: ${result.error ?? `your receiver answered HTTP ${result.httpStatus}`}.`;
    setText('outcome-http', result.httpStatus !== null ? `HTTP ${result.httpStatus}` : 'no answer');
    setText('outcome-time', `${result.durationMs} ms`);
    setText('outcome-delivery', result.eventId);
    setText('outcome-key', keys.selectedOptions[0]?.textContent ?? keys.value);
    outcome.hidden = false;
    outcome.focus();
    say(box.textContent);
  });
};
