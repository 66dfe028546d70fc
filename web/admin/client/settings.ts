/**
 * Shop settings in the browser: each section's form is sent as the groups it replaces
 * (`POST /api/shop/config`); the branding preview follows the inputs as they change (colours through
 * the CSSOM, as the payment page sets them); tax rates are added from the catalog and removed; the
 * fee's worked example is recomputed as the fee is typed. A webhook signing secret, made by saving
 * the first webhook URL or by the rotate button (which asks first), is shown once with a copy button
 * until the merchant says it is saved.
 */
import { brandProperties } from '../../portal/colors';
import { feeExampleTable } from '../fees';
import { api, busy, byId, clearErrors, reloadWith, say, showError, status } from './kit';

type Body = Record<string, unknown>;

const input = (form: HTMLFormElement, name: string) => form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | null;
const text = (form: HTMLFormElement, name: string) => input(form, name)?.value.trim() ?? '';
const checked = (form: HTMLFormElement, name: string) => (input(form, name) as HTMLInputElement | null)?.checked ?? false;
const list = (value: string) =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

/** A number as typed: a number when it is one, else the text (the API says what is wrong with it). */
const numberOf = (value: string): number | string => (value !== '' && Number.isFinite(Number(value)) ? Number(value) : value);
/** A percent as typed, as the fraction the API takes (6 decimals at most, so 7.25 → 0.0725 exactly). */
const fractionOf = (value: string): number | string => {
  const number = numberOf(value);
  return typeof number === 'number' ? Number((number / 100).toFixed(8)) : number;
};

const bodies: Record<string, (form: HTMLFormElement) => Body> = {
  'branding-form': (form) => ({
    branding: {
      name: text(form, 'branding.name'),
      description: text(form, 'branding.description'),
      brandLogoUrl: text(form, 'branding.brandLogoUrl'),
      coverPhotoUrl: text(form, 'branding.coverPhotoUrl'),
      colors: { primary: text(form, 'branding.colors.primary'), accent: text(form, 'branding.colors.accent'), background: text(form, 'branding.colors.background') },
    },
    layout: { template: text(form, 'layout.template'), showLogo: checked(form, 'layout.showLogo'), showPoweredBy: checked(form, 'layout.showPoweredBy') },
  }),
  'tax-form': (form) => ({
    taxDefaults: {
      jurisdictions: [...form.querySelectorAll<HTMLTableRowElement>('#tax-rows tr')].map((row) => {
        const field = (suffix: string) => row.querySelector<HTMLInputElement>(`input[name$=".${suffix}"]`)?.value.trim() ?? '';
        return { code: field('code'), name: field('name'), rate: fractionOf(field('rate')) };
      }),
      defaultJurisdictionCode: text(form, 'taxDefaults.defaultJurisdictionCode') || null,
    },
  }),
  'fee-form': (form) => ({ processingFeePct: numberOf(text(form, 'processingFeePct')) }),
  'directory-form': (form) => ({
    directory: {
      listed: checked(form, 'directory.listed'),
      slug: text(form, 'directory.slug') || null,
      categories: list(text(form, 'directory.categories')),
      keywords: list(text(form, 'directory.keywords')),
      industryPack: text(form, 'directory.industryPack'),
    },
  }),
  'webhook-form': (form) => ({ webhookUrl: text(form, 'webhookUrl') || null }),
  'reserve-form': (form) => {
    const entries = [...form.querySelectorAll<HTMLInputElement>('input[name^="reserveRatios."]')]
      .map((field) => [field.name.slice('reserveRatios.'.length), field.value.trim()] as const)
      .filter(([, value]) => value !== '');
    return { reserveRatios: entries.length === 0 ? null : Object.fromEntries(entries.map(([symbol, value]) => [symbol, fractionOf(value)])) };
  },
};

const sectionNames: Record<string, string> = {
  'branding-form': 'branding',
  'tax-form': 'tax',
  'fee-form': 'processing fee',
  'directory-form': 'directory listing',
  'webhook-form': 'webhook',
  'reserve-form': 'reserve',
};

// ---- The webhook signing secret, shown once ----

const revealSecret = (secret: string, message: string) => {
  const reveal = byId('secret-reveal');
  const value = byId<HTMLInputElement>('secret-value');
  if (!reveal || !value) return;
  value.value = secret;
  reveal.hidden = false;
  // What the page said of the secret before is out of date until the reload that follows.
  for (const id of ['secret-rotate-form', 'signing-secret-facts', 'signing-secret-none']) {
    const element = byId(id);
    if (element) element.hidden = true;
  }
  value.focus();
  value.select();
  say(message);
};

const wireSecret = () => {
  const value = byId<HTMLInputElement>('secret-value');
  byId('secret-copy')?.addEventListener('click', async () => {
    const line = byId('secret-copy-status');
    try {
      await navigator.clipboard.writeText(value?.value ?? '');
      if (line) line.textContent = 'Copied to the clipboard.';
    } catch {
      // Without clipboard access (an insecure origin, a denied permission): selected, for Ctrl+C.
      value?.focus();
      value?.select();
      if (line) line.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
    }
  });
  byId('secret-done')?.addEventListener('click', () => {
    if (value) value.value = '';
    reloadWith('Signing secret saved. It is not shown again.', `${location.pathname}#webhook`);
  });
  const form = byId<HTMLFormElement>('secret-rotate-form');
  if (!form) return;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const make = async () => {
    clearErrors(form);
    const done = busy(submit, 'Making the secret…');
    const answer = await api<{ webhookSecret: string }>('POST', form.dataset.url ?? '');
    done();
    if (!answer.ok) {
      showError(form, answer);
      return;
    }
    revealSecret(answer.json.webhookSecret, 'New signing secret made. It is shown once: copy it now.');
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const dialog = byId<HTMLDialogElement>('rotate-dialog');
    if (form.dataset.confirm !== 'true' || !dialog || typeof dialog.showModal !== 'function') {
      void make();
      return;
    }
    dialog.returnValue = '';
    dialog.addEventListener(
      'close',
      () => {
        if (dialog.returnValue === 'rotate') void make();
        else submit.focus();
      },
      { once: true },
    );
    dialog.showModal();
  });
};

const save = async (form: HTMLFormElement, button: HTMLButtonElement) => {
  clearErrors(form);
  const done = busy(button, 'Saving…');
  status(form.id, 'Saving…');
  const answer = await api<{ webhookSecret?: string }>('POST', form.dataset.endpoint ?? '', bodies[form.id]!(form));
  if (answer.ok && answer.json.webhookSecret) {
    // The first webhook URL made the shop's signing secret: shown now, once, before the page reloads.
    done();
    status(form.id, 'Saved the webhook.');
    revealSecret(answer.json.webhookSecret, 'Saved the webhook, and made its signing secret. It is shown once: copy it now.');
    return;
  }
  if (answer.ok) {
    const section = form.closest('section');
    reloadWith(`Saved the ${sectionNames[form.id] ?? 'settings'}.`, `${location.pathname}${section ? `#${section.id}` : ''}`);
    return;
  }
  done();
  status(form.id, '');
  showError(form, answer);
};

// ---- The branding preview ----

const https = /^https?:\/\//i;

const updatePreview = (form: HTMLFormElement) => {
  const preview = byId('brand-preview');
  if (!preview) return;
  const properties = brandProperties({
    primary: text(form, 'branding.colors.primary'),
    accent: text(form, 'branding.colors.accent'),
    background: text(form, 'branding.colors.background'),
  });
  for (const [name, value] of Object.entries(properties)) preview.style.setProperty(name, value);
  byId('preview-name')!.textContent = text(form, 'branding.name') || (preview.dataset.defaultName ?? '');
  const logo = byId<HTMLImageElement>('preview-logo')!;
  const logoUrl = text(form, 'branding.brandLogoUrl');
  logo.hidden = !(https.test(logoUrl) && checked(form, 'layout.showLogo'));
  if (!logo.hidden && logo.getAttribute('src') !== logoUrl) logo.src = logoUrl;
  const cover = byId<HTMLImageElement>('preview-cover')!;
  const coverUrl = text(form, 'branding.coverPhotoUrl');
  cover.hidden = !https.test(coverUrl);
  if (!cover.hidden && cover.getAttribute('src') !== coverUrl) cover.src = coverUrl;
  preview.dataset.template = text(form, 'layout.template');
};

// ---- Tax rates ----

const renumberRows = () => {
  const rows = [...document.querySelectorAll<HTMLTableRowElement>('#tax-rows tr')];
  rows.forEach((row, index) => {
    for (const element of row.querySelectorAll<HTMLElement>('[name], [data-error-for]')) {
      const rename = (value: string) => value.replace(/^taxDefaults\.jurisdictions\.\d+\./, `taxDefaults.jurisdictions.${index}.`);
      if (element.getAttribute('name')) element.setAttribute('name', rename(element.getAttribute('name')!));
      if (element.dataset.errorFor) element.dataset.errorFor = rename(element.dataset.errorFor);
    }
  });
  byId('tax-empty')!.hidden = rows.length > 0;
};

const cell = (label: string, child: HTMLElement, errorFor?: string) => {
  const td = document.createElement('td');
  td.dataset.label = label;
  td.append(child);
  if (errorFor) {
    const error = document.createElement('p');
    error.className = 'field-error';
    error.dataset.errorFor = errorFor;
    error.hidden = true;
    td.append(error);
  }
  return td;
};

const labelledInput = (name: string, value: string, label: string, inputMode?: string) => {
  const wrap = document.createElement('span');
  const field = document.createElement('input');
  field.name = name;
  field.value = value;
  field.setAttribute('aria-label', label);
  if (inputMode) field.inputMode = inputMode;
  wrap.append(field);
  return wrap;
};

const addRate = () => {
  const choice = byId<HTMLSelectElement>('tax-catalog')!;
  const option = choice.selectedOptions[0];
  if (!option) return;
  const code = option.value;
  const existing = document.querySelector<HTMLTableRowElement>(`#tax-rows tr[data-jurisdiction="${CSS.escape(code)}"]`);
  if (existing) {
    existing.querySelector<HTMLInputElement>('input[name$=".rate"]')?.focus();
    return;
  }
  const index = document.querySelectorAll('#tax-rows tr').length;
  const base = `taxDefaults.jurisdictions.${index}`;
  const row = document.createElement('tr');
  row.dataset.jurisdiction = code;
  const head = document.createElement('th');
  head.scope = 'row';
  head.dataset.label = 'Code';
  const codeText = document.createElement('span');
  codeText.className = 'mono';
  codeText.textContent = code;
  const hidden = document.createElement('input');
  hidden.type = 'hidden';
  hidden.name = `${base}.code`;
  hidden.value = code;
  head.append(codeText, hidden);
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.className = 'button button-small button-danger';
  remove.dataset.removeJurisdiction = '';
  remove.textContent = 'Remove';
  remove.setAttribute('aria-label', `Remove ${code}`);
  const actions = document.createElement('td');
  actions.className = 'row-actions';
  actions.append(remove);
  row.append(
    head,
    cell('Name', labelledInput(`${base}.name`, option.dataset.name ?? '', `Name of ${code}`), `${base}.name`),
    cell('Rate %', labelledInput(`${base}.rate`, option.dataset.rate ?? '', `Rate of ${code} in percent`, 'decimal'), `${base}.rate`),
    actions,
  );
  byId('tax-rows')!.append(row);
  renumberRows();
  row.querySelector<HTMLInputElement>('input[name$=".rate"]')?.focus();
};

const wireTax = () => {
  byId('tax-add')?.addEventListener('click', addRate);
  byId('tax-rows')?.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('[data-remove-jurisdiction]');
    if (!button) return;
    button.closest('tr')?.remove();
    renumberRows();
    byId('tax-add')?.focus();
  });
};

// ---- The fee's worked example ----

const updateFeeExample = (form: HTMLFormElement) => {
  const box = byId('fee-example');
  const table = byId('fee-example-table');
  if (!box || !table) return;
  const typed = text(form, 'processingFeePct');
  const fee = typed === '' ? Number.NaN : Number(typed);
  const taxCode = box.dataset.taxCode ?? '';
  // The script builds the same markup as the server, from the same function (escaped there).
  table.innerHTML = feeExampleTable({ processingFeePct: fee, feeBps: Number(box.dataset.feeBps ?? 0), tax: taxCode ? { code: taxCode, rate: Number(box.dataset.taxRate ?? 0) } : null });
};

export const enhanceSettings = () => {
  for (const form of document.querySelectorAll<HTMLFormElement>('form.settings-form')) {
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void save(form, button);
    });
  }
  const branding = byId<HTMLFormElement>('branding-form');
  if (branding) {
    branding.addEventListener('input', () => updatePreview(branding));
    branding.addEventListener('change', () => updatePreview(branding));
    updatePreview(branding);
  }
  wireTax();
  wireSecret();
  const fee = byId<HTMLFormElement>('fee-form');
  fee?.addEventListener('input', () => updateFeeExample(fee));
};
