/**
 * Inventory in the browser: the item form is sent to the session route as JSON (an error lands next
 * to the field the API names), and a delete is confirmed in a dialog first. After either, the page is
 * loaded again, so the list shown is always the server's.
 */
import { api, busy, byId, clearErrors, reloadWith, showError, status } from './kit';

/** A number field: empty is absent, a number is sent as one, anything else as typed (the API says what is wrong). */
const numberOf = (value: string): number | string | undefined => {
  const text = value.trim();
  if (text === '') return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : text;
};

const itemBody = (form: HTMLFormElement) => {
  const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement | null)?.value ?? '';
  const id = form.dataset.id;
  return {
    ...(id && { id }),
    sku: value('sku'),
    name: value('name'),
    priceUsd: numberOf(value('priceUsd')) ?? '',
    ...(numberOf(value('stockQty')) !== undefined && { stockQty: numberOf(value('stockQty')) }),
    category: value('category'),
    // Sent back as shown: a save replaces the whole item, so a field left out would be lost.
    industryPack: value('industryPack'),
    description: value('description'),
    taxable: (form.elements.namedItem('taxable') as HTMLInputElement).checked,
    tags: value('tags')
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean),
  };
};

const saveItem = async (form: HTMLFormElement, button: HTMLButtonElement) => {
  clearErrors(form);
  const done = busy(button, 'Saving…');
  status(form.id, 'Saving the item…');
  const body = itemBody(form);
  const answer = await api<{ item: { sku: string } }>('POST', form.dataset.endpoint ?? '', body);
  if (answer.ok) {
    reloadWith(`${form.dataset.id ? 'Saved' : 'Added'} ${body.sku}.`, form.dataset.list);
    return;
  }
  done();
  status(form.id, '');
  showError(form, answer);
};

const wireDelete = () => {
  const dialog = byId<HTMLDialogElement>('delete-dialog');
  if (!dialog) return;
  let target: { id: string; sku: string; opener: HTMLButtonElement } | null = null;
  const error = byId('delete-error')!;
  const confirm = byId<HTMLButtonElement>('delete-confirm')!;
  for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-delete]')) {
    button.addEventListener('click', () => {
      target = { id: button.dataset.delete ?? '', sku: button.dataset.sku ?? '', opener: button };
      byId('delete-text')!.textContent = `${target.sku} is removed from your inventory. Receipts already made keep their lines.`;
      error.hidden = true;
      dialog.showModal();
      byId('delete-cancel')?.focus();
    });
  }
  byId('delete-cancel')?.addEventListener('click', () => dialog.close());
  // Closed by Cancel or Escape: the focus goes back to the row's button.
  dialog.addEventListener('close', () => target?.opener.focus());
  confirm.addEventListener('click', async () => {
    if (!target) return;
    const done = busy(confirm, 'Deleting…');
    const answer = await api('DELETE', `${dialog.dataset.endpoint}?id=${encodeURIComponent(target.id)}`);
    if (answer.ok) {
      reloadWith(`Deleted ${target.sku}.`);
      return;
    }
    done();
    error.textContent = answer.json.message;
    error.hidden = false;
  });
};

export const enhanceInventory = () => {
  const form = byId<HTMLFormElement>('item-form');
  if (form) {
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void saveItem(form, button);
    });
  }
  wireDelete();
};
