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
import { newReceipt } from '../../shared/domain/receipt';
import { receiptCore } from '../support/fixtures';
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
  deps = {
    ...deps,
    settings: {
      ...deps.settings,
      tokens: [
        { symbol: 'USDC', address: '0x' + 'a'.repeat(40), decimals: 6 },
        { symbol: 'USDT', address: '0x' + 'b'.repeat(40), decimals: 6 },
        { symbol: 'ETH', address: '0x' + '0'.repeat(40), decimals: 18 },
      ],
    },
  };
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
});

describe('the console without a session', () => {
  it('answers the sign-in page at every page address, with no inline script and the page security headers', async () => {
    for (const path of ['/console', '/console/split', '/console/inventory', '/console/settings', '/console/receipts']) {
      const page = await get(path);
      expect(page.status, path).toBe(200);
      expect(page.text).toContain('<h1 id="signin-title">Sign in to your shop</h1>');
      expect(page.text).toContain('data-page="sign-in"');
      expect(page.text).not.toContain('<nav');
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(page.headers['cache-control']).toBe('no-store');
      // Scripts only from files, never inline; no style attributes either.
      expect(page.text).toMatch(/<script src="\/console\/assets\/admin-[A-Z0-9]+\.js" defer><\/script>/);
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(page.text).not.toMatch(/\sstyle=/);
      // Where the script signs in: the route table's paths.
      expect(page.text).toContain('data-nonce-url="/api/auth/nonce"');
      expect(page.text).toContain('data-login-url="/api/auth/login"');
    }
  });

  it('treats a forged, an ended and an expired session as none, and still refuses them on the JSON routes', async () => {
    const forged = await get('/console', { cookie: 'cb_auth_token=eyJhbGciOiJub25lIn0.e30.' });
    expect(forged.text).toContain('Sign in to your shop');
    const out = await invoke('auth-logout', { method: 'POST', path: '/api/auth/logout', headers: merchant.headers() });
    expect(out.status).toBe(200);
    expect((await get('/console', merchant.headers())).text).toContain('Sign in to your shop');
    expect((await invoke('auth-me', { path: '/api/auth/me', headers: merchant.headers() })).status).toBe(401);
    const again = await signInAs(testWallets.merchant, now);
    expect((await get('/console', again.headers())).text).not.toContain('Sign in to your shop');
    now += 24 * 60 * 60 * 1000 + 1;
    expect((await get('/console', again.headers())).text).toContain('Sign in to your shop');
  });
});

describe('the signed-in console', () => {
  it('shows the page with the navigation to every page, the current one marked, and the wallet', async () => {
    const page = await get('/console/split', merchant.headers());
    expect(page.status).toBe(200);
    const labels = [...page.text.matchAll(/<li><a href="([^"]+)"[^>]*>([^<]+)<\/a><\/li>/g)].map((match) => `${match[2]} ${match[1]}`);
    expect(labels).toEqual([
      'Overview /console',
      'Split /console/split',
      'Inventory /console/inventory',
      'Settings /console/settings',
      'API keys /console/api-keys',
      'Receipts /console/receipts',
      'Terminal /console/terminal',
      'Webhooks /console/webhooks',
    ]);
    expect(page.text).toMatch(/<a href="\/console\/split" aria-current="page"/);
    expect(page.text.match(/aria-current="page"/g)).toHaveLength(1);
    expect(page.text).toContain('<h1>Split</h1>');
    expect(page.text).toContain(`data-wallet="${testWallets.merchant.address.toLowerCase()}"`);
    expect(page.text).toContain('<button class="button button-quiet" type="button" id="sign-out">Sign out</button>');
    expect(page.text).toContain('<a class="skip-link" href="#main">Skip to content</a>');
    expect((await get('/console', merchant.headers())).text).toMatch(/<a href="\/console" aria-current="page"/);
    expect((await get('/console/overview', merchant.headers())).text).toMatch(/<a href="\/console" aria-current="page"/);
  });

  it('answers its own 404 page for a page it does not have, signed in or not', async () => {
    for (const headers of [{}, merchant.headers()]) {
      const page = await get('/console/nothing-here', headers);
      expect(page.status).toBe(404);
      expect(page.headers['content-type']).toContain('text/html');
      expect(visibleText(page.text)).toContain('There is no such page');
      expect(page.text).toContain('<code>not_found</code>');
    }
  });

  it('serves its script and stylesheet under content-hashed names, cached for a year; other names are 404', async () => {
    const page = await get('/console', merchant.headers());
    const script = /<script src="(\/console\/assets\/[^"]+)"/.exec(page.text)![1]!;
    const style = /<link rel="stylesheet" href="(\/console\/assets\/[^"]+)"/.exec(page.text)![1]!;
    const js = await get(script);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.text).toContain('eip6963:requestProvider');
    const css = await get(style);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('.nav');
    expect((await get('/console/assets/admin-NOPE.js')).status).toBe(404);
    // The portal's files are not the console's.
    expect((await get(script.replace('/console/', '/portal/'))).status).toBe(404);
  });
});

const post = (name: string, path: string, body: unknown, headers: Record<string, string>) =>
  invoke(name, { method: 'POST', path, headers: { ...headers, 'content-type': 'application/json' }, body });

describe('inventory in the console', () => {
  it('writes through the session routes: CSRF required, the wallet from the session, errors naming their field', async () => {
    const wallet = testWallets.merchant.address.toLowerCase();
    const created = await post('console-inventory-upsert', '/api/console/inventory', { sku: 'MUG-1', name: 'Mug', priceUsd: 12.5, stockQty: 4, tags: ['kitchen'] }, merchant.headers());
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ ok: true, item: { sku: 'MUG-1', wallet, priceUsd: 12.5 } });
    const bad = await post('console-inventory-upsert', '/api/console/inventory', { sku: 'MUG-2', name: 'Mug', priceUsd: -1 }, merchant.headers());
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: 'invalid_input', field: 'priceUsd', message: 'priceUsd: must not be negative' });
    const { cookie, origin } = merchant.headers();
    expect((await post('console-inventory-upsert', '/api/console/inventory', { sku: 'MUG-3', name: 'Mug', priceUsd: 1 }, { cookie: cookie!, origin: origin! })).status).toBe(403);
    expect((await post('console-inventory-upsert', '/api/console/inventory', { sku: 'MUG-3', name: 'Mug', priceUsd: 1 }, {})).status).toBe(401);
    const id = (created.json.item as { id: string }).id;
    const other = await signInAs(testWallets.other);
    // Another wallet's session cannot delete it: to that wallet there is no such item.
    expect((await invoke('console-inventory-delete', { method: 'DELETE', path: `/api/console/inventory?id=${id}`, headers: other.headers() })).status).toBe(404);
    expect((await invoke('console-inventory-delete', { method: 'DELETE', path: `/api/console/inventory?id=${id}`, headers: merchant.headers() })).json).toEqual({ ok: true, id });
  });

  it('lists with the API’s search, filters and pages from the address, and fills the form to edit an item', async () => {
    for (let n = 1; n <= 25; n++) {
      const answer = await post('console-inventory-upsert', '/api/console/inventory', { sku: `SKU-${String(n).padStart(2, '0')}`, name: n % 2 ? `Blue cup ${n}` : `Red plate ${n}`, priceUsd: n, category: n % 2 ? 'cups' : 'plates' }, merchant.headers());
      expect(answer.status).toBe(200);
    }
    const first = visibleText((await get('/console/inventory', merchant.headers())).text);
    expect(first).toContain('Page 1 of 2 · 25 items');
    const cups = await get('/console/inventory?q=blue&category=cups&sort=priceUsd&order=asc', merchant.headers());
    const names = [...cups.text.matchAll(/<th scope="row" data-label="Name">([^<]+)<\/th>/g)].map((match) => match[1]);
    expect(names).toEqual(['Blue cup 1', 'Blue cup 3', 'Blue cup 5', 'Blue cup 7', 'Blue cup 9', 'Blue cup 11', 'Blue cup 13', 'Blue cup 15', 'Blue cup 17', 'Blue cup 19', 'Blue cup 21', 'Blue cup 23', 'Blue cup 25']);
    // The search form keeps what was asked; the filters stay open.
    expect(cups.text).toMatch(/<input id="f-search-q" name="q" type="search" value="blue"/);
    expect(cups.text).toContain('<details class="filters" open>');
    const page2 = await get('/console/inventory?page=2&sort=sku&order=asc', merchant.headers());
    expect(visibleText(page2.text)).toContain('Page 2 of 2');
    expect([...page2.text.matchAll(/data-label="SKU"><span class="mono">([^<]+)</g)].map((match) => match[1])).toEqual(['SKU-21', 'SKU-22', 'SKU-23', 'SKU-24', 'SKU-25']);
    expect(page2.text).toContain('rel="prev" href="/console/inventory?sort=sku&amp;order=asc&amp;page=1"');
    // A search the API refuses is said, and the list falls back to all items.
    expect(visibleText((await get('/console/inventory?priceMin=9&priceMax=2', merchant.headers())).text)).toContain('This search cannot be run: priceMin: must not exceed priceMax.');
    const item = (await deps.inventory.findBySku(testWallets.merchant.address.toLowerCase(), 'SKU-07'))!.value;
    const edit = await get(`/console/inventory?edit=${item.id}`, merchant.headers());
    expect(edit.text).toContain('<h2 id="item-editor-title">Edit SKU-07</h2>');
    expect(edit.text).toMatch(/<form id="item-form" novalidate data-endpoint="\/api\/console\/inventory" data-id="itm_[^"]+" data-list="\/console\/inventory">/);
    expect(edit.text).toMatch(/name="priceUsd" type="text" value="7"/);
    // Every stored field is in the form, so a save (which replaces the item) keeps it.
    await post('console-inventory-upsert', '/api/console/inventory', { id: item.id, sku: 'SKU-07', name: item.name, priceUsd: 7, industryPack: 'restaurant' }, merchant.headers());
    expect((await get(`/console/inventory?edit=${item.id}`, merchant.headers())).text).toMatch(/name="industryPack" type="text" value="restaurant"/);
    // An id no item can have is the empty form, not an error.
    for (const odd of ['a%2Fb', 'a%5Cb', 'a%23b']) {
      const page = await get(`/console/inventory?edit=${odd}`, merchant.headers());
      expect(page.status, odd).toBe(200);
      expect(page.text).toContain('Add an item');
    }
  });

  it('shows each wallet its own items only', async () => {
    await post('console-inventory-upsert', '/api/console/inventory', { sku: 'MINE-1', name: 'Only mine', priceUsd: 3 }, merchant.headers());
    const other = await signInAs(testWallets.other);
    const theirs = await get('/console/inventory', other.headers());
    expect(theirs.text).not.toContain('Only mine');
    expect(visibleText(theirs.text)).toContain('No items yet');
    expect(visibleText((await get('/console/inventory', merchant.headers())).text)).toContain('Only mine');
  });

  it('renders merchant strings as text', async () => {
    await post('console-inventory-upsert', '/api/console/inventory', { sku: 'XSS-1', name: '<img src=x onerror=alert(1)>', priceUsd: 3, tags: ['<b>t</b>'] }, merchant.headers());
    const page = await get('/console/inventory', merchant.headers());
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).not.toContain('<b>t</b>');
  });
});

describe('settings in the console', () => {
  it('shows the shop configuration in its sections, the tax catalog to choose from and the fee’s worked example', async () => {
    const update = await post(
      'shop-config-update',
      '/api/shop/config',
      {
        branding: { name: 'Tea & Co', colors: { primary: '#7c2d12', accent: '#0e9f6e', background: '#fff7ed' } },
        taxDefaults: { jurisdictions: [{ code: 'US-CA', name: 'California', rate: 0.0725 }], defaultJurisdictionCode: 'US-CA' },
        processingFeePct: 2.5,
        reserveRatios: { USDC: 0.6, USDT: 0.4 },
      },
      merchant.headers(),
    );
    expect(update.json).toMatchObject({ ok: true });
    const page = await get('/console/settings', merchant.headers());
    const text = visibleText(page.text);
    expect(page.text).toContain('<p class="preview-name" id="preview-name">Tea &amp; Co</p>');
    expect(page.text).toMatch(/name="branding.colors.primary" type="color" value="#7c2d12"/);
    expect(page.text).toMatch(/name="taxDefaults.jurisdictions.0.rate" value="7.25"/);
    expect(page.text).toMatch(/<option value="US-NY" data-name="New York" data-rate="[\d.]+">/);
    expect(page.text).toMatch(/<option value="US-CA" selected>US-CA · California \(7.25 %, yours\)<\/option>/);
    // $100 of items, 7.25 % tax, a 2.5 % fee over the platform's 1 %: the merchant nets $107.25 × 1.025.
    expect(text).toContain('Items $100.00 Tax (7.25 % · US-CA) $7.25 Processing Fee $3.79 The buyer pays $111.04 You receive (the split keeps 1 % for the platform) $109.93');
    expect(page.text).toMatch(/name="reserveRatios.USDC" type="text" value="60"/);
    expect(page.text).toMatch(/name="reserveRatios.USDT" type="text" value="40"/);
    for (const id of ['branding-form', 'tax-form', 'fee-form', 'directory-form', 'webhook-form', 'reserve-form']) expect(page.text).toContain(`<form id="${id}" class="settings-form" novalidate data-endpoint="/api/shop/config">`);
    // Ids are unique on the page: every label points at one control.
    const ids = [...page.text.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });
});

describe('the webhook signing secret in the console', () => {
  it('offers to make one, then shows it by its prefix only, with the previous one while it still signs beside a new one', async () => {
    const settings = async () => (await get('/console/settings', merchant.headers())).text;
    const before = await settings();
    expect(visibleText(before)).toContain('No signing secret yet');
    expect(before).toContain('<form id="secret-rotate-form" novalidate data-url="/api/console/webhooks/secret/rotate">');
    expect(before).toContain('>Make a signing secret</button>');

    const first = (await post('shop-config-update', '/api/shop/config', { webhookUrl: 'https://shop.example/hooks' }, merchant.headers())).json.webhookSecret as string;
    const made = await settings();
    expect(made).toContain(`<span class="mono">${first.slice(0, 10)}…</span>, made`);
    expect(made).toContain('data-confirm="true"');
    expect(made).toContain('>Rotate the secret</button>');
    expect(made).toContain('<section id="secret-reveal" class="key-reveal" aria-labelledby="secret-reveal-title" hidden tabindex="-1">');
    expect(made).not.toContain(first);

    const second = (await post('console-webhook-secret-rotate', '/api/console/webhooks/secret/rotate', undefined, merchant.headers())).json.webhookSecret as string;
    const rotated = visibleText(await settings());
    expect(rotated).toContain(`Current secret ${second.slice(0, 10)}… , made`);
    expect(rotated).toContain(`Previous secret ${first.slice(0, 10)}… still signs beside it until`);
    // Once the overlap is over, the previous secret is gone from the page.
    now += 24 * 60 * 60 * 1000 + 1;
    merchant = await signInAs(testWallets.merchant, now);
    expect(visibleText(await settings())).not.toContain('Previous secret');
  });
});

describe('the split in the console', () => {
  it('says so when the deployment has no chain', async () => {
    expect(visibleText((await get('/console/split', merchant.headers())).text)).toContain('This deployment has no chain configured');
  });
});

describe('the overview', () => {
  it('counts the receipts by status and what was paid today, and lists what is left to set up', async () => {
    const empty = visibleText((await get('/console', merchant.headers())).text);
    expect(empty).toContain('Paid today $0.00 0 payments');
    expect(empty).toContain('No receipts yet');
    expect(empty).toContain('Set up your shop Deploy your split Add the items you sell');
    const wallet = testWallets.merchant.address.toLowerCase();
    const dayStart = now - (now % 86_400_000);
    const add = (id: string, status: 'paid' | 'reconciled' | 'pending' | 'failed', usd: number, paidAt: number | null, owner = wallet) =>
      deps.receipts.create(owner, { ...newReceipt(receiptCore({ receiptId: id, wallet: owner, status, usd, customerTotalUsd: usd + 0.5 }), now - 1_000), paidAt });
    await add('R-1', 'paid', 10, dayStart + 1);
    await add('R-2', 'reconciled', 20, dayStart + 2);
    await add('R-3', 'paid', 40, dayStart - 1);
    await add('R-4', 'pending', 5, null);
    await add('R-5', 'failed', 5, null);
    await add('R-6', 'paid', 1_000, dayStart + 3, testWallets.other.address.toLowerCase());
    const page = await get('/console', merchant.headers());
    // Paid today: R-1 and R-2 (customer totals), not yesterday's R-3, not another wallet's R-6.
    expect(page.text).toMatch(/<dd id="paid-today">\$31\.00<small>2 payments since <time/);
    const counts = [...page.text.matchAll(/<tr data-status="(\w+)">[\s\S]*?<td class="num"><a href="\/console\/receipts\?status=\1"[^>]*>(\d+)<\/a><\/td><\/tr>/g)].map((match) => `${match[1]} ${match[2]}`);
    expect(counts).toEqual(['pending 1', 'paid 2', 'reconciled 1', 'failed 1']);
  });
});
