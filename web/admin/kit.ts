/**
 * What every console page is made of, on the server: the page contract (a page module per file under
 * pages/, listed in pages/index.ts) and the markup helpers the pages share, so that every control is
 * labelled the same way, every field has its place for an error the API names (`field` in an error
 * body), and every merchant-supplied string goes through `escapeHtml`. Pure: no I/O here.
 */
import type { AppDeps } from '../../shared/app/deps';
import { escapeHtml } from '../../shared/domain/html';
import type { Session } from '../../shared/domain/session';

export type Html = string;

/** What a page's render gets: the signed-in wallet, the query string and the service's ports. */
export interface PageContext {
  deps: AppDeps;
  session: Session;
  /** The signed-in wallet (lower-case), whose data the page shows: never another's. */
  wallet: string;
  /** The query string's values (the first of each name). */
  query: Readonly<Record<string, string>>;
  now: number;
}

export interface AdminPage {
  /** The path under /console/ ('' for the overview at /console). */
  slug: string;
  /** Its name in the navigation, and its heading. */
  label: string;
  /** One line under the heading: what the page is for. */
  intro: string;
  /** The page's content (inside `<main>`, under its heading). */
  render(context: PageContext): Promise<Html>;
}

export const ADMIN_ROOT = '/console';

/** A console page's path, with a query string of the values given (empty ones left out). */
export const adminPath = (slug: string, query: Record<string, string | number | undefined | null> = {}): string => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return `${slug ? `${ADMIN_ROOT}/${slug}` : ADMIN_ROOT}${text ? `?${text}` : ''}`;
};

export const esc = escapeHtml;

/** Attributes from a record: `true` writes the bare name, `false`/null/undefined leave it out, the rest is escaped. */
export const attrs = (values: Record<string, string | number | boolean | null | undefined>): string =>
  Object.entries(values)
    .filter(([, value]) => value !== null && value !== undefined && value !== false)
    .map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeHtml(value)}"`))
    .join('');

/** An id from an API field path (`branding.colors.primary` → `f-branding-colors-primary`). */
export const fieldId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]+/g, '-')}`;

export interface FieldOptions {
  /** The API's name for the value (the `field` of its errors), also the input's `name`. */
  name: string;
  label: string;
  value?: string | number | null;
  type?: 'text' | 'number' | 'url' | 'search' | 'color';
  hint?: string;
  required?: boolean;
  placeholder?: string;
  inputmode?: 'decimal' | 'numeric' | 'text' | 'url';
  step?: string;
  min?: string | number;
  max?: string | number;
  maxlength?: number;
  autocomplete?: string;
  /** Set by the page when it rendered an error of its own for this field. */
  error?: string;
  /** Prefixes the element ids, for a second form on the page with the same names (a search form). */
  idPrefix?: string;
}

/**
 * A labelled input with its hint and an error slot (hidden until the API names this field). The
 * script finds the input by `name` and the slot by `data-error-for`.
 */
export const field = (options: FieldOptions): Html => {
  const id = fieldId(`${options.idPrefix ?? ''}${options.name}`);
  const describedBy = [options.hint ? `${id}-hint` : '', `${id}-error`].filter(Boolean).join(' ');
  return `<div class="field">
<label for="${id}">${esc(options.label)}${options.required ? ' <span class="required" aria-hidden="true">*</span>' : ''}</label>
<input${attrs({
    id,
    name: options.name,
    type: options.type ?? 'text',
    value: options.value === null || options.value === undefined ? undefined : String(options.value),
    required: options.required,
    placeholder: options.placeholder,
    inputmode: options.inputmode,
    step: options.step,
    min: options.min,
    max: options.max,
    maxlength: options.maxlength,
    autocomplete: options.autocomplete ?? 'off',
    'aria-describedby': describedBy,
    'aria-invalid': options.error ? 'true' : undefined,
  })}>
${options.hint ? `<p class="hint" id="${id}-hint">${esc(options.hint)}</p>` : ''}${errorSlot(options.name, options.error, id)}
</div>`;
};

/** Where an error about `name` appears (the script fills it from an API answer's `field`). */
export const errorSlot = (name: string, error?: string, id = fieldId(name)): Html =>
  `<p class="field-error" id="${id}-error" data-error-for="${esc(name)}"${error ? '' : ' hidden'}>${error ? esc(error) : ''}</p>`;

export interface SelectOptions {
  name: string;
  label: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  value?: string | null;
  hint?: string;
  idPrefix?: string;
}

export const select = (options: SelectOptions): Html => {
  const id = fieldId(`${options.idPrefix ?? ''}${options.name}`);
  const describedBy = [options.hint ? `${id}-hint` : '', `${id}-error`].filter(Boolean).join(' ');
  return `<div class="field">
<label for="${id}">${esc(options.label)}</label>
<select${attrs({ id, name: options.name, 'aria-describedby': describedBy })}>
${options.options.map((option) => `<option${attrs({ value: option.value, selected: option.value === (options.value ?? '') })}>${esc(option.label)}</option>`).join('\n')}
</select>
${options.hint ? `<p class="hint" id="${id}-hint">${esc(options.hint)}</p>` : ''}${errorSlot(options.name, undefined, id)}
</div>`;
};

export const checkbox = (options: { name: string; label: string; checked: boolean; hint?: string }): Html => {
  const id = fieldId(options.name);
  return `<div class="field field-check">
<input${attrs({ id, name: options.name, type: 'checkbox', checked: options.checked, 'aria-describedby': `${options.hint ? `${id}-hint ` : ''}${id}-error` })}>
<label for="${id}">${esc(options.label)}</label>
${options.hint ? `<p class="hint" id="${id}-hint">${esc(options.hint)}</p>` : ''}${errorSlot(options.name)}
</div>`;
};

export type Tone = 'info' | 'success' | 'warning' | 'danger';

/** A message box; `alert` for what needs attention now. */
export const notice = (tone: Tone, text: Html, options: { id?: string; alert?: boolean; hidden?: boolean } = {}): Html =>
  `<div${attrs({ class: `notice notice-${tone}`, id: options.id, role: options.alert ? 'alert' : undefined, hidden: options.hidden })}>${text}</div>`;

/** A titled card; its heading names the region for assistive technology. */
export const panel = (id: string, title: string, body: Html, extra: Record<string, string | undefined> = {}): Html =>
  `<section${attrs({ class: 'panel', id, 'aria-labelledby': `${id}-title`, ...extra })}>
<h2 id="${id}-title">${esc(title)}</h2>
${body}
</section>`;

/** The form-level message of a form (what no field takes), and the live status of its submit. */
export const formStatus = (id: string): Html =>
  `<p class="form-error" id="${id}-error" role="alert" hidden></p><p class="form-status" id="${id}-status" role="status" aria-live="polite"></p>`;

const usdFormat = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
export const usd = (amount: number): string => usdFormat.format(amount);

/** "0x1234…cdef", whole in the title. */
export const shortHex = (hex: string): Html => `<span class="mono" title="${esc(hex)}">${esc(hex.length > 14 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex)}</span>`;

/** A time in UTC ("2026-05-01 14:03 UTC"), machine-readable for the script. */
export const utcTime = (ms: number): Html => {
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}">${esc(`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`)}</time>`;
};

/** A transaction, linked to the explorer when the deployment has one. */
export const txLink = (explorerUrl: string | null, hash: string): Html =>
  explorerUrl ? `<a href="${esc(`${explorerUrl.replace(/\/+$/, '')}/tx/${hash}`)}" rel="noreferrer noopener" target="_blank">${shortHex(hash)}</a>` : shortHex(hash);

/** Basis points as a percentage ("99 %", "0.5 %"). */
export const percentOfBps = (bps: number): string => `${Number((bps / 100).toFixed(2))} %`;
