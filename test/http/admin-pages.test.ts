/**
 * The merchant console's routes through their handlers, on memory stores: the sign-in page without a
 * session (none, forged, ended), the signed-in wallet's pages with their navigation, the security
 * headers and the content-hashed files, and the 404 page.
 */
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { hs256SessionTokens } from '../../shared/adapters/jwt/session-tokens';
import { memoryDeps, setDeps } from '../../shared/composition';
import { httpFunctions } from '../../shared/http/function';
import { allRoutes, matchRoute } from '../../shared/http/routes';
import { invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

interface Page {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** A GET through the route's handler, as the Functions host calls it, with a browser's headers. */
export const get = async (path: string, headers: Record<string, string> = {}): Promise<Page> => {
  const url = new URL(path, 'http://localhost');
  const matched = matchRoute(allRoutes, 'GET', url.pathname);
  if (!matched) throw new Error(`no route for ${path}`);
  const request = new HttpRequest({ method: 'GET', url: url.href, params: matched.params, headers });
  const response = (await httpFunctions.get(matched.route.name)!.options.handler(request, new InvocationContext({ functionName: matched.route.name, logHandler: () => {} }))) as HttpResponseInit;
  const body = response.body;
  return {
    status: response.status ?? 200,
    headers: Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, string>).map(([name, value]) => [name.toLowerCase(), value])),
    text: body instanceof Uint8Array ? new TextDecoder().decode(body) : String(body ?? ''),
  };
};

/** The page's text without its markup. */
export const visibleText = (html: string) =>
  html
    .replace(/<(script|style|noscript)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

let deps: AppDeps;
let merchant: SignedInBrowser;
let now: number;
const clock = { now: () => now };

beforeEach(async () => {
  now = Date.now();
  deps = memoryDeps({ clock, sessionTokens: hs256SessionTokens('test-secret-test-secret-test-secret!', clock) });
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
});

describe('the console without a session', () => {
  it('answers the sign-in page at every page address, with no inline script and the page security headers', async () => {
    for (const path of ['/admin', '/admin/split', '/admin/inventory', '/admin/settings', '/admin/receipts']) {
      const page = await get(path);
      expect(page.status, path).toBe(200);
      expect(page.text).toContain('<h1 id="signin-title">Sign in to your shop</h1>');
      expect(page.text).toContain('data-page="sign-in"');
      expect(page.text).not.toContain('<nav');
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(page.headers['cache-control']).toBe('no-store');
      // Scripts only from files, never inline; no style attributes either.
      expect(page.text).toMatch(/<script src="\/admin\/assets\/admin-[A-Z0-9]+\.js" defer><\/script>/);
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(page.text).not.toMatch(/\sstyle=/);
      // Where the script signs in: the route table's paths.
      expect(page.text).toContain('data-nonce-url="/api/auth/nonce"');
      expect(page.text).toContain('data-login-url="/api/auth/login"');
    }
  });

  it('treats a forged, an ended and an expired session as none, and still refuses them on the JSON routes', async () => {
    const forged = await get('/admin', { cookie: 'cb_auth_token=eyJhbGciOiJub25lIn0.e30.' });
    expect(forged.text).toContain('Sign in to your shop');
    const out = await invoke('auth-logout', { method: 'POST', path: '/api/auth/logout', headers: merchant.headers() });
    expect(out.status).toBe(200);
    expect((await get('/admin', merchant.headers())).text).toContain('Sign in to your shop');
    expect((await invoke('auth-me', { path: '/api/auth/me', headers: merchant.headers() })).status).toBe(401);
    const again = await signInAs(testWallets.merchant, now);
    expect((await get('/admin', again.headers())).text).not.toContain('Sign in to your shop');
    now += 24 * 60 * 60 * 1000 + 1;
    expect((await get('/admin', again.headers())).text).toContain('Sign in to your shop');
  });
});

describe('the signed-in console', () => {
  it('shows the page with the navigation to every page, the current one marked, and the wallet', async () => {
    const page = await get('/admin/split', merchant.headers());
    expect(page.status).toBe(200);
    const labels = [...page.text.matchAll(/<li><a href="([^"]+)"[^>]*>([^<]+)<\/a><\/li>/g)].map((match) => `${match[2]} ${match[1]}`);
    expect(labels).toEqual([
      'Overview /admin',
      'Split /admin/split',
      'Inventory /admin/inventory',
      'Settings /admin/settings',
      'API keys /admin/api-keys',
      'Receipts /admin/receipts',
      'Terminal /admin/terminal',
      'Webhooks /admin/webhooks',
    ]);
    expect(page.text).toMatch(/<a href="\/admin\/split" aria-current="page"/);
    expect(page.text.match(/aria-current="page"/g)).toHaveLength(1);
    expect(page.text).toContain('<h1>Split</h1>');
    expect(page.text).toContain(`data-wallet="${testWallets.merchant.address.toLowerCase()}"`);
    expect(page.text).toContain('<button class="button button-quiet" type="button" id="sign-out">Sign out</button>');
    expect(page.text).toContain('<a class="skip-link" href="#main">Skip to content</a>');
    expect((await get('/admin', merchant.headers())).text).toMatch(/<a href="\/admin" aria-current="page"/);
    expect((await get('/admin/overview', merchant.headers())).text).toMatch(/<a href="\/admin" aria-current="page"/);
  });

  it('answers its own 404 page for a page it does not have, signed in or not', async () => {
    for (const headers of [{}, merchant.headers()]) {
      const page = await get('/admin/nothing-here', headers);
      expect(page.status).toBe(404);
      expect(page.headers['content-type']).toContain('text/html');
      expect(visibleText(page.text)).toContain('There is no such page');
      expect(page.text).toContain('<code>not_found</code>');
    }
  });

  it('serves its script and stylesheet under content-hashed names, cached for a year; other names are 404', async () => {
    const page = await get('/admin', merchant.headers());
    const script = /<script src="(\/admin\/assets\/[^"]+)"/.exec(page.text)![1]!;
    const style = /<link rel="stylesheet" href="(\/admin\/assets\/[^"]+)"/.exec(page.text)![1]!;
    const js = await get(script);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.text).toContain('eip6963:requestProvider');
    const css = await get(style);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('.nav');
    expect((await get('/admin/assets/admin-NOPE.js')).status).toBe(404);
    // The portal's files are not the console's.
    expect((await get(script.replace('/admin/', '/portal/'))).status).toBe(404);
  });
});
