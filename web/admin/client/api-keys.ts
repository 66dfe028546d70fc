/**
 * API keys: the page's browser part. Creating shows the key once (with a copy button) until the
 * merchant says it is saved; revoking asks first; rolling goes on batch by batch (`nextCursor`)
 * and says how many receipts moved.
 */
import { api, busy, byId, clearErrors, reloadWith, say, showError, status, type Answer } from './kit';

interface Created {
  apiKey: string;
  key: { id: string; prefix: string };
}

interface Rolled {
  moved: number;
  nextCursor: string | null;
}

const enhanceCreate = () => {
  const form = byId<HTMLFormElement>('key-create');
  const reveal = byId('key-reveal');
  const value = byId<HTMLInputElement>('key-value');
  if (!form || !reveal || !value) return;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  byId('scopes-all')?.addEventListener('click', () => {
    for (const box of form.querySelectorAll<HTMLInputElement>('input[name="scopes"]')) box.checked = true;
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const chosen = [...form.querySelectorAll<HTMLInputElement>('input[name="scopes"]:checked')].map((box) => box.value);
    if (chosen.length === 0) {
      showError(form, { status: 400, json: { error: 'invalid_input', message: 'scopes: tick at least one scope', field: 'scopes' } });
      return;
    }
    const done = busy(submit, 'Creating…');
    status('key-create', 'Creating the key…');
    const answer = await api<Created>('POST', form.dataset.url ?? '', { scopes: chosen });
    done();
    status('key-create', '');
    if (!answer.ok) {
      showError(form, answer);
      return;
    }
    value.value = answer.json.apiKey;
    form.hidden = true;
    reveal.hidden = false;
    reveal.dataset.prefix = answer.json.key.prefix;
    value.focus();
    value.select();
    say('Key created. It is shown once: copy it now.');
  });
  byId('key-copy')?.addEventListener('click', async () => {
    const line = byId('key-copy-status');
    try {
      await navigator.clipboard.writeText(value.value);
      if (line) line.textContent = 'Copied to the clipboard.';
    } catch {
      // Without clipboard access (an insecure origin, a denied permission): selected, for Ctrl+C.
      value.focus();
      value.select();
      if (line) line.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
    }
  });
  byId('key-done')?.addEventListener('click', () => {
    value.value = '';
    reloadWith(`Key ${reveal.dataset.prefix ?? ''}… created.`);
  });
};

const enhanceRevoke = () => {
  const dialog = byId<HTMLDialogElement>('revoke-dialog');
  for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-revoke]')) {
    button.addEventListener('click', () => {
      const revoke = async () => {
        const done = busy(button, 'Revoking…');
        const answer = await api('DELETE', button.dataset.url ?? '');
        if (answer.ok) {
          reloadWith('Key revoked. Roll it to sign its receipts with another key.');
          return;
        }
        done();
        const box = byId('keys-error');
        if (box) {
          box.textContent = answer.json.message;
          box.hidden = false;
        }
        say(answer.json.message);
      };
      if (!dialog || typeof dialog.showModal !== 'function') {
        void revoke();
        return;
      }
      dialog.returnValue = '';
      dialog.addEventListener(
        'close',
        () => {
          if (dialog.returnValue === 'revoke') void revoke();
          else button.focus();
        },
        { once: true },
      );
      dialog.showModal();
    });
  }
};

const enhanceRoll = () => {
  for (const form of document.querySelectorAll<HTMLFormElement>('form.roll-form')) {
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      const toKeyId = form.querySelector<HTMLSelectElement>('select[name="toKeyId"]')!.value;
      const done = busy(submit, 'Rolling…');
      let moved = 0;
      let cursor: string | null = null;
      do {
        status(form.id, `Moving receipts… ${moved} so far`);
        const answer: Answer<Rolled> = await api<Rolled>('POST', form.dataset.url ?? '', cursor ? { toKeyId, cursor } : { toKeyId });
        if (!answer.ok) {
          done();
          status(form.id, moved > 0 ? `${moved} receipts moved before the error; roll again to finish.` : '');
          showError(form, answer);
          return;
        }
        moved += answer.json.moved;
        cursor = answer.json.nextCursor;
      } while (cursor);
      reloadWith(
        moved === 0
          ? 'No receipt of that key could still change: nothing needed moving.'
          : moved === 1
            ? '1 receipt is now signed by the key you chose.'
            : `${moved} receipts are now signed by the key you chose.`,
      );
    });
  }
};

export const enhanceApiKeys = (): void => {
  enhanceCreate();
  enhanceRevoke();
  enhanceRoll();
};
