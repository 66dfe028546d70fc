import { escapeHtml } from '../domain/html';
import { CORRELATION_HEADER } from './headers';

/**
 * Headers of every page: no inline script or style (scripts and styles come from this origin only),
 * framing only by the configured ancestors, no referrer to other sites, no content sniffing.
 */
export const pageHeaders = (correlationId: string, frameAncestors: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: https:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; '),
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  [CORRELATION_HEADER]: correlationId,
  ...extra,
});

/** The page for an error on a page route: the status and the message as text (a 404 is a page, not JSON). */
export const htmlErrorPage = (status: number, body: { error: string; message: string }): string => {
  const title = status === 404 ? 'Not found' : status === 429 ? 'Too many requests' : status >= 500 ? 'Something went wrong' : 'This request cannot be answered';
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title></head>`,
    `<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(body.message)}</p><p><code>${escapeHtml(body.error)}</code></p></main></body></html>`,
  ].join('\n');
};
