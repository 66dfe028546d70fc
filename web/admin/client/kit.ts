/**
 * The console's browser helpers, shared by every page's script: calls to the service's JSON routes
 * with the session cookie and the CSRF token, errors shown next to the field the API names, buttons
 * that show progress while a call runs, and a message carried over a reload.
 */
export const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T | null;

/** The page's live region: read out by screen readers, shown nowhere. */
export const say = (text: string) => {
  const live = byId('live');
  if (live) live.textContent = text;
};

const CSRF_COOKIE = 'cb_csrf_token';

/** The CSRF token the service set at sign-in (a cookie the script may read; the session cookie it may not). */
export const csrfToken = (): string => {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CSRF_COOKIE) return decodeURIComponent(value.join('='));
  }
  return '';
};

export interface ApiError {
  error: string;
  message: string;
  field?: string;
}

export type Answer<T> = { ok: true; status: number; json: T } | { ok: false; status: number; json: ApiError };

/** A call to one of the service's JSON routes; writes carry the CSRF token (the browser adds Origin). */
export const api = async <T>(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<Answer<T>> => {
  try {
    const response = await fetch(url, {
      method,
      credentials: 'same-origin',
      cache: 'no-store',
      headers: {
        accept: 'application/json',
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(method !== 'GET' && { 'x-csrf-token': csrfToken() }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.ok) return { ok: true, status: response.status, json: json as T };
    return {
      ok: false,
      status: response.status,
      json: { error: String(json.error ?? 'error'), message: String(json.message ?? `The service answered ${response.status}.`), ...(typeof json.field === 'string' && { field: json.field }) },
    };
  } catch {
    return { ok: false, status: 0, json: { error: 'network', message: 'The connection to the service was interrupted. Check your connection and try again.' } };
  }
};

/** The API says `price: must be …`; next to the field, `must be …` is enough. */
export const withoutField = (message: string, field?: string): string => {
  if (field && message.startsWith(`${field}: `)) return message.slice(field.length + 2);
  return message;
};

/** What an answer means when no field takes it: the session ended, or the service's own words. */
export const messageOf = (error: ApiError, status: number): string => {
  if (status === 401) return 'Your session ended. Reload the page and sign in again.';
  if (status === 403 && error.error === 'forbidden') return `${error.message}. Reload the page and try again.`;
  return error.message;
};

/** Clears the errors a form shows. */
export const clearErrors = (form: HTMLElement) => {
  for (const slot of form.querySelectorAll<HTMLElement>('[data-error-for]')) {
    slot.hidden = true;
    slot.textContent = '';
  }
  for (const input of form.querySelectorAll('[aria-invalid="true"]')) input.removeAttribute('aria-invalid');
  for (const box of form.querySelectorAll<HTMLElement>('.form-error')) {
    box.hidden = true;
    box.textContent = '';
  }
};

/** The slot for an error about `field`: its own, else that of the closest enclosing field (`a.b.2.c` → `a.b.2` → `a.b` → `a`). */
const slotFor = (form: HTMLElement, field: string): HTMLElement | null => {
  const parts = field.split('.');
  while (parts.length > 0) {
    const slot = form.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(parts.join('.'))}"]`);
    if (slot) return slot;
    parts.pop();
  }
  return null;
};

/**
 * Shows an error answer: next to the field the API names (the input marked invalid and focused), or
 * in the form's own message box when no field of the form takes it.
 */
export const showError = (form: HTMLElement, answer: { status: number; json: ApiError }) => {
  const field = answer.json.field;
  const slot = field ? slotFor(form, field) : null;
  if (field && slot) {
    const name = slot.dataset.errorFor ?? field;
    slot.textContent = withoutField(answer.json.message, field === name ? field : undefined).replace(/^[\w.]+: /, '');
    slot.hidden = false;
    const input = form.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]`);
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
    say(`Not saved: ${name} ${slot.textContent}`);
    return;
  }
  const box = form.querySelector<HTMLElement>('.form-error');
  const text = messageOf(answer.json, answer.status);
  if (box) {
    box.textContent = text;
    box.hidden = false;
  }
  say(text);
};

/**
 * Marks a button busy while a long operation runs: disabled, `aria-busy`, a spinner and a label
 * saying what is happening; the returned function restores it.
 */
export const busy = (button: HTMLButtonElement, label: string) => {
  const before = button.textContent ?? '';
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.classList.add('is-busy');
  button.textContent = label;
  return () => {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.classList.remove('is-busy');
    button.textContent = before;
  };
};

/** A form's status line (`<form-id>-status`): what is under way, read out as it changes. */
export const status = (formId: string, text: string) => {
  const line = byId(`${formId}-status`);
  if (line) line.textContent = text;
};

const FLASH = 'admin-flash';

/**
 * Loads the page again (its server render shows the change) at `url` (default: this one), with a
 * message shown once after it. Going to the same address with another `#fragment` alone would only
 * scroll, so that case reloads.
 */
export const reloadWith = (message: string, url = location.pathname + location.search) => {
  sessionStorage.setItem(FLASH, message);
  const target = new URL(url, location.href);
  if (target.pathname + target.search !== location.pathname + location.search) {
    location.assign(target.href);
    return;
  }
  history.replaceState(null, '', target.hash || target.pathname + target.search);
  location.reload();
};

/** The message a reload carried, in the page's status region. */
export const showFlash = () => {
  const message = sessionStorage.getItem(FLASH);
  if (!message) return;
  sessionStorage.removeItem(FLASH);
  const box = byId('flash');
  if (!box) return;
  box.className = 'notice notice-success';
  box.textContent = message;
};
