import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

let deps: AppDeps;
let merchant: SignedInBrowser;
let key: Merchant;

beforeEach(async () => {
  deps = memoryDeps();
  deps = { ...deps, settings: { ...deps.settings, adminWallets: [testWallets.admin.address.toLowerCase()] } };
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
  key = await addMerchant(deps, testWallets.merchant.address.toLowerCase());
});

const update = (headers: Record<string, string>, body: unknown) => invoke('shop-config-update', { method: 'POST', path: '/api/shop/config', headers, body });
const read = () => invoke('shop-config-get', { path: '/api/shop/config', headers: { 'x-subscription-id': key.subscriptionId } });

describe('shop configuration', () => {
  it('starts from defaults and replaces only the groups a write names', async () => {
    expect((await read()).json.config).toMatchObject({ processingFeePct: 0, webhookUrl: null, directory: { slug: null, listed: false, industryPack: 'general' }, updatedAt: null });
    const written = await update(merchant.headers(), {
      branding: { name: 'Bean There', colors: { primary: '#112233' } },
      taxDefaults: { jurisdictions: [{ code: 'US-CA', name: 'California', rate: 0.0725 }], defaultJurisdictionCode: 'US-CA' },
      processingFeePct: 2.9,
      directory: { slug: 'bean-there', categories: ['coffee'], keywords: ['beans', 'espresso'], industryPack: 'restaurant', listed: true },
    });
    expect(written.status).toBe(200);
    await update(merchant.headers(), { processingFeePct: 3 });
    const { config } = (await read()).json as { config: Record<string, any> };
    expect(config.branding).toMatchObject({ name: 'Bean There', colors: { primary: '#112233', accent: '#0e9f6e' } });
    expect(config.processingFeePct).toBe(3);
    expect(config.directory).toEqual({ slug: 'bean-there', categories: ['coffee'], keywords: ['beans', 'espresso'], industryPack: 'restaurant', listed: true });
    expect(config.taxDefaults.defaultJurisdictionCode).toBe('US-CA');
  });

  it.each([
    [{ processingFeePct: 10.01 }, 'processingFeePct'],
    [{ processingFeePct: 2.999 }, 'processingFeePct'],
    [{ processingFeePct: -1 }, 'processingFeePct'],
    [{ taxDefaults: { jurisdictions: [{ code: 'US-CA', name: 'CA', rate: 0.07251234 }] } }, 'taxDefaults.jurisdictions.0.rate'],
    [{ taxDefaults: { jurisdictions: [{ code: 'california', name: 'CA', rate: 0.07 }] } }, 'taxDefaults.jurisdictions.0.code'],
    [{ taxDefaults: { jurisdictions: [], defaultJurisdictionCode: 'XX-ZZ' } }, 'taxDefaults.defaultJurisdictionCode'],
    [{ directory: { slug: 'Bean There' } }, 'directory.slug'],
    [{ directory: { slug: 'a'.repeat(33) } }, 'directory.slug'],
    [{ directory: { slug: 'admin' } }, 'directory.slug'],
    [{ directory: { categories: ['a', 'b', 'c', 'd'] } }, 'directory.categories'],
    [{ directory: { keywords: ['1', '2', '3', '4', '5', '6'] } }, 'directory.keywords'],
    [{ directory: { industryPack: 'casino' } }, 'directory.industryPack'],
    [{ branding: { colors: { primary: 'red' } } }, 'branding.colors.primary'],
    [{ branding: { brandLogoUrl: 'javascript:alert(1)' } }, 'branding.brandLogoUrl'],
    [{ webhookUrl: 'not a url' }, 'webhookUrl'],
  ])('answers 400 invalid_input for %j naming %s', async (body, field) => {
    expect(await update(merchant.headers(), body)).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
  });

  it('keeps a slug unique across merchants (409 slug_taken) and frees the old one on a change', async () => {
    expect((await update(merchant.headers(), { directory: { slug: 'bean-there' } })).status).toBe(200);
    const other = await signInAs(testWallets.other);
    expect(await update(other.headers(), { directory: { slug: 'bean-there' } })).toMatchObject({ status: 409, json: { error: 'slug_taken', field: 'directory.slug' } });
    expect((await update(merchant.headers(), { directory: { slug: 'beans-2' } })).status).toBe(200);
    expect((await update(other.headers(), { directory: { slug: 'bean-there' } })).status).toBe(200);
    expect((await update(merchant.headers(), { directory: { slug: 'beans-2' } })).status).toBe(200);
  });

  it('refuses http and private webhook targets outside development', async () => {
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    for (const url of ['http://example.com/hook', 'https://localhost/hook', 'https://10.0.0.5/hook', 'https://169.254.169.254/latest', 'https://[::1]/x']) {
      expect(await update(merchant.headers(), { webhookUrl: url })).toMatchObject({ status: 400, json: { field: 'webhookUrl' } });
    }
    expect((await update(merchant.headers(), { webhookUrl: 'https://hooks.example.com/receipts' })).status).toBe(200);
  });

  it('needs shop:read to read (403) and a session to write (401)', async () => {
    const noScope = await addMerchant(deps, testWallets.merchant.address.toLowerCase(), { scopes: ['inventory:read'] });
    expect((await invoke('shop-config-get', { path: '/api/shop/config', headers: { 'x-subscription-id': noScope.subscriptionId } })).status).toBe(403);
    expect((await update({}, { processingFeePct: 1 })).status).toBe(401);
  });
});

describe('pricing, site configuration and the tax catalog', () => {
  const pricing = () => invoke('pricing-config-get', { path: '/api/pricing/config', headers: { 'x-subscription-id': key.subscriptionId } });

  it('serves the brand’s fees and plans to any valid key', async () => {
    expect((await pricing()).json).toEqual({
      brandKey: 'default',
      platformFeeBps: 100,
      partnerFeeBps: 0,
      plans: { starter: { priceUsd: 0, requestsPerMinute: 60 }, pro: { priceUsd: 399, requestsPerMinute: 600 }, enterprise: { priceUsd: 500, requestsPerMinute: 3000 } },
    });
  });

  it('lets only a platform admin change fees, within bounds', async () => {
    const admin = await signInAs(testWallets.admin);
    const set = (headers: Record<string, string>, body: unknown) => invoke('pricing-config-update', { method: 'POST', path: '/api/pricing/config', headers, body });
    expect(await set(merchant.headers(), { platformFeeBps: 50 })).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    expect(await set(admin.headers(), { platformFeeBps: 9000, partnerFeeBps: 1001, partnerWallet: testWallets.other.address })).toMatchObject({ status: 400, json: { field: 'partnerFeeBps' } });
    expect(await set(admin.headers(), { partnerFeeBps: 100 })).toMatchObject({ status: 400, json: { field: 'partnerWallet' } });
    expect(await set(admin.headers(), { platformFeeBps: 9000, partnerFeeBps: 1000, partnerWallet: testWallets.other.address })).toMatchObject({ status: 400, json: { field: 'partnerFeeBps' } });
    expect(await set(admin.headers(), { platformFeeBps: 12.5 })).toMatchObject({ status: 400, json: { field: 'platformFeeBps' } });
    const ok = await set(admin.headers(), { platformFeeBps: 150, partnerFeeBps: 50, partnerWallet: testWallets.other.address });
    expect(ok).toMatchObject({ status: 200, json: { ok: true, platformFeeBps: 150, partnerFeeBps: 50, partnerWallet: testWallets.other.address.toLowerCase() } });
    expect((await pricing()).json).toMatchObject({ platformFeeBps: 150, partnerFeeBps: 50 });
  });

  it('serves the site configuration publicly, with a shop’s look by slug', async () => {
    const site = await invoke('site-config', { path: '/api/site/config' });
    // No chain is configured here: nothing to pay with (tokens come with their contracts, ETH with a price feed).
    expect(site.json).toMatchObject({ brandKey: 'default', chainId: 31337, tokens: [] });
    await update(merchant.headers(), { branding: { name: 'Bean There' }, processingFeePct: 1.5, directory: { slug: 'bean-there' } });
    const shop = await invoke('site-config', { path: '/api/site/config?shop=bean-there' });
    expect(shop.json.shop).toMatchObject({ slug: 'bean-there', name: 'Bean There', processingFeePct: 1.5 });
    expect(await invoke('site-config', { path: '/api/site/config?shop=nobody-here' })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(await invoke('site-config', { path: '/api/site/config?shop=NOT_A_SLUG' })).toMatchObject({ status: 400, json: { field: 'shop' } });
  });

  it('serves the tax catalog to any valid key', async () => {
    const answer = await invoke('tax-catalog', { path: '/api/tax/catalog', headers: { 'x-subscription-id': key.subscriptionId } });
    expect(answer.json.jurisdictions).toContainEqual({ code: 'US-CA', name: 'California', rate: 0.0725 });
    expect((answer.json.sources as string[]).length).toBeGreaterThan(0);
    expect((await invoke('tax-catalog', { path: '/api/tax/catalog' })).status).toBe(401);
  });
});
