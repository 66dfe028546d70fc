/**
 * The buyer's page routes through their handlers, on memory stores and a stand-in chain (the page
 * reads only the chain's id; a quote in ETH reads its feed; a quote derives the receipt's address): the page with no script, its security
 * headers and escaping, the not-found page, the hashed browser files and the QR codes.
 */
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import QRCode from 'qrcode';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { createReceipt } from '../../shared/app/receipts';
import { memoryDeps, setDeps } from '../../shared/composition';
import { newMerchant } from '../../shared/domain/merchant';
import type { Chain } from '../../shared/ports/chain';
import { depositAddress, forwarderImplementation, receiptKey } from '../../shared/adapters/evm/deposit-address';
import { httpFunctions } from '../../shared/http/function';
import { allRoutes, matchRoute } from '../../shared/http/routes';
import { quoteFor } from '../../shared/app/payments/portal';
import { QR_OPTIONS } from '../../web/portal/qr';
import { tickingClock } from '../support/fixtures';
import { startHost } from '../support/http';
import { storeSnapshot } from '../support/snapshot';
import '../../functions/index';

const merchant = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const split = '0x' + '5'.repeat(40);
const usdc = '0x' + 'a'.repeat(40);
const usdt = '0x' + 'b'.repeat(40);

/** The chain as the page needs it: an id, and the ETH price for quotes in ETH. */
const DEPOSIT_FACTORY = '0x' + 'de'.repeat(20);
const standInChain = (now: () => number) =>
  ({
    chainId: 31337,
    ethUsdPrice: async () => ({ answer: 3_000n * 10n ** 8n, decimals: 8, updatedAt: now() }),
    // The real derivation: a receipt's address is a function of the factory, the split and the receipt.
    depositAddress: async (split: string, wallet: string, receiptId: string) =>
      depositAddress({ factory: DEPOSIT_FACTORY, implementation: forwarderImplementation(DEPOSIT_FACTORY), split, receiptKey: receiptKey({ chainId: 31337, wallet, receiptId }) }),
  }) as unknown as Chain;

let deps: AppDeps;

const addShop = async (branding: Record<string, unknown> = {}, withSplit = true) => {
  const base = newMerchant(merchant, deps.clock.now());
  await deps.merchants.upsert(merchant, {
    ...base,
    shop: { ...base.shop, processingFeePct: 1.5, branding: { ...base.shop.branding, name: 'Demo Coffee Roasters', ...branding } },
    split: withSplit
      ? {
          address: split,
          recipients: [
            { address: merchant, bps: 9_900, role: 'merchant' },
            { address: '0x' + '3'.repeat(40), bps: 100, role: 'platform' },
          ],
          platformFeeBps: 100,
          partnerFeeBps: 0,
          txHash: '0x' + '1'.repeat(64),
          chainId: 31337,
          deployedAt: deps.clock.now(),
        }
      : null,
  });
};

const addReceipt = (id: string, lineItems: Array<{ label: string; priceUsd: number; qty?: number }>, totalUsd: number) =>
  createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems, totalUsd });

interface Response {
  status: number;
  headers: Record<string, string>;
  text: string;
  bytes: Uint8Array;
}

/** Calls a page or file route's handler as the Functions host would; the body as text and as bytes. */
const get = async (path: string): Promise<Response> => {
  const url = new URL(path, 'http://localhost');
  const matched = matchRoute(allRoutes, 'GET', url.pathname);
  if (!matched) throw new Error(`no route for ${path}`);
  const handler = httpFunctions.get(matched.route.name)!.options.handler;
  const request = new HttpRequest({ method: 'GET', url: url.href, params: matched.params });
  const response = (await handler(request, new InvocationContext({ functionName: matched.route.name, logHandler: () => {} }))) as HttpResponseInit;
  const body = response.body;
  const bytes = body instanceof Uint8Array ? body : new TextEncoder().encode(String(body ?? ''));
  return {
    status: response.status ?? 200,
    headers: Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, string>).map(([name, value]) => [name.toLowerCase(), value])),
    text: new TextDecoder().decode(bytes),
    bytes,
  };
};

/** The page's text without its markup: what a reader of the page with no script sees. */
const visibleText = (html: string) =>
  html
    .replace(/<(script|style|noscript)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<form[^>]*hidden[\s\S]*?<\/form>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

beforeEach(async () => {
  const clock = tickingClock(Date.now());
  deps = memoryDeps({ clock, chain: standInChain(() => clock.now()) });
  deps = {
    ...deps,
    settings: {
      ...deps.settings,
      frameAncestors: "'self' https://shop.example",
      tokens: [
        { symbol: 'USDC', address: usdc, decimals: 6 },
        { symbol: 'USDT', address: usdt, decimals: 6 },
        { symbol: 'ETH', address: '0x0000000000000000000000000000000000000000', decimals: 18 },
      ],
      payments: { ...deps.settings.payments, explorerUrl: 'https://explorer.example' },
    },
  };
  setDeps(deps);
});

describe('the payment page', () => {
  it('shows the shop, every line, the fee and the total, with no script', async () => {
    await addShop();
    await addReceipt('R-100', [{ label: 'Ceramic mug', priceUsd: 24, qty: 2 }, { label: 'Gift card', priceUsd: 25 }], 49);
    const page = await get('/pay/R-100');
    expect(page.status).toBe(200);
    const text = visibleText(page.text);
    expect(text).toContain('Demo Coffee Roasters');
    expect(text).toMatch(/Ceramic mug Qty 2 \$24\.00/);
    expect(text).toContain('Gift card $25.00');
    // A receipt made through the API has no fee line: the service's share is shown as one, so the rows add up.
    const receipt = (await deps.receipts.get(merchant, 'R-100'))!.value;
    const fee = Math.round((receipt.customerTotalUsd - 49) * 100) / 100;
    expect(fee).toBeGreaterThan(0);
    expect(text).toContain(`Processing Fee $${fee.toFixed(2)}`);
    expect(text).toContain(`Total $${receipt.customerTotalUsd.toFixed(2)}`);
    expect(text).toContain('Awaiting payment');
    // Without the script and with no quote open (only a POST makes one): the note, and the QR code of
    // the payment link, which opens the page in a phone wallet's browser.
    expect(page.text).toMatch(/<noscript>[\s\S]*needs a browser wallet[\s\S]*<img class="qr-image" src="\/api\/portal\/R-100\/qr\.svg"[^>]* alt="QR code: the link to this payment page"/);
    // With a quote open, the QR code of that quote, which any phone wallet pays as it is.
    const quote = await quoteFor(deps, 'R-100', 'USDT');
    const quoted = await get('/pay/R-100');
    expect(quoted.text).toMatch(
      new RegExp(`<noscript>[\\s\\S]*<img class="qr-image" src="/api/portal/R-100/qr\\.svg\\?token=USDT"[^>]* alt="QR code: pay ${quote.display.replace('.', '\\.')} USDT from a phone wallet"`),
    );
    expect(page.text).toMatch(/<form id="pay-form" class="pay-form" hidden/);
    expect(page.text).toMatch(/<p class="live" id="live" role="status" aria-live="polite">/);
  });

  it('answers with the page security headers: no inline script or style, framing from settings', async () => {
    await addShop();
    await addReceipt('R-101', [{ label: 'Beans', priceUsd: 10 }], 10);
    const { headers, text } = await get('/portal/R-101');
    const csp = headers['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'self' https://shop.example");
    expect(headers).toMatchObject({ 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff', 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    // Nothing inline the policy would refuse: scripts and styles are files of this origin.
    expect(text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(text).toMatch(/<script src="\/portal\/assets\/portal-[A-Z0-9]+\.js" defer><\/script>/);
    expect(text).toMatch(/<link rel="stylesheet" href="\/portal\/assets\/portal-[A-Z0-9]+\.css">/);
  });

  it('renders markup in the shop name, logo URL and item labels as text', async () => {
    const attack = `<script>alert(1)</script><img src=x onerror=alert(2)>"'`;
    await addShop({ name: attack, brandLogoUrl: 'https://logo.example/a.png?"><script>alert(3)</script>' });
    await addReceipt('R-102', [{ label: attack, priceUsd: 5 }, { label: '</td></tr></table><h1>owned</h1>', priceUsd: 1 }], 6);
    const { text } = await get('/pay/R-102');
    expect(text).not.toContain('<script>alert');
    expect(text).not.toContain('<img src=x');
    expect(text).not.toContain('<h1>owned');
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;');
    expect(text).toContain('&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;h1&gt;owned&lt;/h1&gt;');
    expect(text).toContain('src="https://logo.example/a.png?&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;"');
  });

  it('serves /pay/{id} and /portal/{id} as the same page', async () => {
    await addShop();
    await addReceipt('R-103', [{ label: 'Beans', priceUsd: 10 }], 10);
    const [pay, portal] = [await get('/pay/R-103'), await get('/portal/R-103')];
    expect(pay.status).toBe(200);
    expect(pay.text).toBe(portal.text);
  });

  it('answers an unknown id with the portal’s own 404 page', async () => {
    const missing = await get('/pay/R-nope');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(missing.headers['content-security-policy']).toContain("script-src 'self'");
    expect(missing.text).toContain('We can’t find this payment');
    expect(missing.text).toMatch(/<link rel="stylesheet" href="\/portal\/assets\/portal-[A-Z0-9]+\.css">/);
    // An id no receipt could have is not found either, never an error.
    expect((await get('/pay/..%2F..%2Fetc')).status).toBe(404);
  });

  it('says when the shop cannot take payments yet, and offers no payment', async () => {
    await addShop({}, false);
    await addReceipt('R-104', [{ label: 'Beans', priceUsd: 10 }], 10);
    const page = await get('/pay/R-104');
    expect(visibleText(page.text)).toContain('This shop cannot take payments yet');
    expect(page.text).not.toContain('id="pay-form"');
  });

  it('shows a paid receipt’s payment with its transaction on the explorer', async () => {
    await addShop();
    await addReceipt('R-105', [{ label: 'Beans', priceUsd: 10 }], 10);
    const stored = (await deps.receipts.get(merchant, 'R-105'))!;
    const hash = '0x' + 'c'.repeat(64);
    await deps.receipts.replace(
      merchant,
      { ...stored.value, status: 'paid', transactionHash: hash, paidAt: deps.clock.now(), token: 'USDC', amountPaid: '10100000', buyerWallet: '0x' + '9'.repeat(40) },
      stored.etag,
    );
    const page = await get('/pay/R-105');
    const text = visibleText(page.text);
    expect(text).toContain('Payment received');
    expect(text).toContain('Demo Coffee Roasters received 10.1 USDC');
    expect(page.text).toContain(`href="https://explorer.example/tx/${hash}"`);
    expect(page.text).not.toContain('id="pay-form"');
  });
});

describe('the portal’s browser files', () => {
  it('serves the hashed script and stylesheet for a year, and 404 for any other name', async () => {
    await addShop();
    await addReceipt('R-200', [{ label: 'Beans', priceUsd: 10 }], 10);
    const page = await get('/pay/R-200');
    const script = /<script src="(\/portal\/assets\/[^"]+)"/.exec(page.text)![1]!;
    const style = /<link rel="stylesheet" href="(\/portal\/assets\/[^"]+)"/.exec(page.text)![1]!;
    const js = await get(script);
    expect(js.status).toBe(200);
    expect(js.headers).toMatchObject({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' });
    expect(js.text).toContain('eip6963:requestProvider');
    expect(js.bytes.byteLength).toBeLessThan(60 * 1024);
    const css = await get(style);
    expect(css.headers).toMatchObject({ 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
    for (const name of ['portal.js', 'manifest.json', '..%2Fclient.ts', '..%2F..%2Fpackage.json', 'portal-XXXXXXXX.js', encodeURIComponent(script.split('/').pop()! + '?')]) {
      const answer = await get(`/portal/assets/${name}`);
      expect(answer.status, name).toBe(404);
      expect(answer.headers['cache-control'] ?? '').not.toContain('immutable');
    }
  });
});

describe('through the local host', () => {
  it('sends the page, a file’s bytes and the QR code as the handlers answer them', async () => {
    await addShop();
    await addReceipt('R-250', [{ label: 'Beans', priceUsd: 10 }], 10);
    const host = await startHost(deps);
    try {
      const page = await fetch(`${host.url}/pay/R-250`);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /<script src="(\/portal\/assets\/[^"]+)"/.exec(html)![1]!;
      const viaHost = await fetch(`${host.url}${script}`);
      expect(viaHost.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(new Uint8Array(await viaHost.arrayBuffer())).toEqual((await get(script)).bytes);
      const qr = await fetch(`${host.url}/api/portal/R-250/qr.svg?token=USDT`);
      expect(qr.headers.get('content-type')).toBe('image/svg+xml');
      expect(await qr.text()).toMatch(/^<svg/);
    } finally {
      await host.close();
    }
  });
});

describe('the QR code', () => {
  beforeEach(async () => {
    await addShop();
    await addReceipt('R-300', [{ label: 'Beans', priceUsd: 10 }], 10);
  });

  it('with a token encodes the open quote’s EIP-681 request; without one open, the payment link', async () => {
    const link = await QRCode.toString(`${deps.settings.baseUrl}/pay/R-300`, QR_OPTIONS);
    // No quote yet: a GET makes none, it shows the payment link (an image, as the page embedding it expects).
    const before = await get('/api/portal/R-300/qr.svg?token=USDC');
    expect(before.status).toBe(200);
    expect(before.text).toBe(link);
    expect((await deps.receipts.get(merchant, 'R-300'))!.value.quotes ?? []).toEqual([]);

    const quote = await quoteFor(deps, 'R-300', 'USDC');
    const usdcQr = await get('/api/portal/R-300/qr.svg?token=USDC');
    expect(usdcQr.status).toBe(200);
    expect(usdcQr.headers).toMatchObject({ 'content-type': 'image/svg+xml', 'cache-control': 'no-store' });
    expect(usdcQr.text).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // To the receipt's own address, for exactly the customer total.
    const deposit = (await deps.receipts.get(merchant, 'R-300'))!.value.deposit!.address;
    expect(deposit).not.toBe(split);
    expect(quote).toMatchObject({ token: 'USDC', uri: `ethereum:${usdc}@31337/transfer?address=${deposit}&uint256=${quote.amount}` });
    expect(BigInt(quote.amount) % 10_000n).toBe(0n);
    expect(usdcQr.text).toBe(await QRCode.toString(quote.uri, QR_OPTIONS));
    // The same open quote again: the same code.
    expect((await get('/api/portal/R-300/qr.svg?token=USDC')).text).toBe(usdcQr.text);
    // Another token's quote is not open: the link, not a new quote.
    expect((await get('/api/portal/R-300/qr.svg?token=ETH')).text).toBe(link);
    expect((await deps.receipts.get(merchant, 'R-300'))!.value.quotes!.map((open) => open.token)).toEqual(['USDC']);

    const ethQuote = await quoteFor(deps, 'R-300', 'ETH');
    expect(ethQuote.uri).toBe(`ethereum:${deposit}@31337?value=${ethQuote.amount}`);
    const ethQr = await get('/api/portal/R-300/qr.svg?token=ETH');
    expect(ethQr.text).toBe(await QRCode.toString(ethQuote.uri, QR_OPTIONS));
    expect(ethQr.text).not.toBe(usdcQr.text);

    expect((await get('/api/portal/R-300/qr.svg')).text).toBe(link);
  });

  it('shows no quote of a receipt that can no longer be paid, open or not: the payment link', async () => {
    await quoteFor(deps, 'R-300', 'USDC');
    const stored = (await deps.receipts.get(merchant, 'R-300'))!;
    await deps.receipts.replace(merchant, { ...stored.value, status: 'paid', transactionHash: '0x' + 'c'.repeat(64), paidAt: deps.clock.now() }, stored.etag);
    const qr = await get('/api/portal/R-300/qr.svg?token=USDC');
    expect(qr.status).toBe(200);
    expect(qr.text).toBe(await QRCode.toString(`${deps.settings.baseUrl}/pay/R-300`, QR_OPTIONS));
  });

  it('answers 404 for an unknown receipt and 400 for an unknown token, in the error shape', async () => {
    expect(await get('/api/portal/R-missing/qr.svg?token=USDC')).toMatchObject({ status: 404 });
    expect(await get('/api/portal/R-missing/qr.svg')).toMatchObject({ status: 404 });
    const bad = await get('/api/portal/R-300/qr.svg?token=DOGE');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ error: 'invalid_input', field: 'token' });
  });
});

describe('quotes are made only by a POST', () => {
  it('no GET under /api/portal, /pay or /portal of a payable receipt writes anything (no quote, no claim), whatever its query', async () => {
    await addShop();
    await addReceipt('R-400', [{ label: 'Beans', priceUsd: 10 }], 10);
    const script = /<script src="\/portal\/assets\/([^"]+)"/.exec((await get('/pay/R-400')).text)![1]!;
    // Every GET route of the buyer's paths in the table, so a new one is covered without being named here.
    const gets = allRoutes.filter((route) => route.method === 'GET' && /^\/(api\/portal|pay|portal)\//.test(route.path));
    expect(gets.map((route) => route.name)).toEqual(expect.arrayContaining(['portal-page', 'pay-page', 'portal-asset', 'portal-get', 'portal-qr', 'portal-proof']));
    const before = storeSnapshot(deps);
    for (const route of gets) {
      const path = route.path.replace('{id}', 'R-400').replace('{file}', script);
      expect(path, route.name).not.toContain('{');
      for (const query of ['', '?token=USDC', '?token=ETH', '?token=USDT&q=q_1']) {
        expect((await get(path + query)).status, `${route.name}${query}`).toBeLessThan(500);
      }
    }
    expect(storeSnapshot(deps)).toBe(before);
    expect((await deps.receipts.get(merchant, 'R-400'))!.value.quotes ?? []).toEqual([]);
    // The POST does make one (so the snapshot above would have seen it).
    await quoteFor(deps, 'R-400', 'USDC');
    expect(storeSnapshot(deps)).not.toBe(before);
  });
});
