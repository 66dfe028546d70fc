import type { Cookie } from '@azure/functions';

export const SESSION_COOKIE = 'cb_auth_token';
/** Readable by the page's script (not HttpOnly): it echoes it in `x-csrf-token`. */
export const CSRF_COOKIE = 'cb_csrf_token';
export const CSRF_HEADER = 'x-csrf-token';

export const parseCookies = (header: string | null): Record<string, string> => {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 1) continue;
    const name = part.slice(0, at).trim();
    if (name in cookies) continue;
    try {
      cookies[name] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // A malformed value is as good as none.
    }
  }
  return cookies;
};

/** `Set-Cookie` text for a cookie, as the Functions host writes it (used by the local host). */
export const serializeCookie = (cookie: Cookie): string => {
  const parts = [`${cookie.name}=${encodeURIComponent(cookie.value)}`];
  if (cookie.domain) parts.push(`Domain=${cookie.domain}`);
  parts.push(`Path=${cookie.path ?? '/'}`);
  if (cookie.maxAge !== undefined) parts.push(`Max-Age=${cookie.maxAge}`);
  if (cookie.expires !== undefined) parts.push(`Expires=${new Date(cookie.expires).toUTCString()}`);
  if (cookie.secure) parts.push('Secure');
  if (cookie.httpOnly) parts.push('HttpOnly');
  if (cookie.sameSite) parts.push(`SameSite=${cookie.sameSite}`);
  return parts.join('; ');
};

/** The session and CSRF cookies; `undefined` values clear them. Secure unless the site is plain http. */
export const sessionCookies = (baseUrl: string, values: { token: string; csrfToken: string } | undefined, maxAgeSeconds: number): Cookie[] => {
  const secure = !baseUrl.startsWith('http://');
  const maxAge = values ? maxAgeSeconds : 0;
  return [
    { name: SESSION_COOKIE, value: values?.token ?? '', httpOnly: true, secure, sameSite: 'Strict', path: '/', maxAge },
    { name: CSRF_COOKIE, value: values?.csrfToken ?? '', httpOnly: false, secure, sameSite: 'Strict', path: '/', maxAge },
  ];
};
