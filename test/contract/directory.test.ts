import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { listDirectory, refreshDirectoryFields } from '../../shared/app/directory';
import { updateMerchant } from '../../shared/app/merchants';
import { updateShopConfig } from '../../shared/app/shop-config';
import { deploySplit } from '../../shared/app/splits';
import { DirectoryQuery } from '../../shared/domain/directory';
import { describeZodError } from '../../shared/domain/errors';
import { newMerchant, type MerchantSplit } from '../../shared/domain/merchant';
import { ShopConfigUpdate, defaultShopConfig, type ShopConfig } from '../../shared/domain/shop';
import type { Chain } from '../../shared/ports/chain';
import { tickingClock } from '../support/fixtures';
import { allStores } from '../support/stores';

/** One seeded merchant document, and what the directory should make of it. */
interface Seed {
  wallet: string;
  slug: string | null;
  name: string;
  description: string;
  categories: string[];
  keywords: string[];
  brandLogoUrl: string;
  listed: boolean;
  split: boolean;
  /** Written straight to the store without the directory fields, as documents stored before they existed. */
  legacy?: boolean;
}

const walletOf = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const pad = (n: number) => String(n).padStart(3, '0');
const pool = ['coffee', 'tea', 'books', 'art', 'bikes'];
const prefixes = ['delta', 'alpha', 'charlie', 'bravo'];

const splitFor = (wallet: string): MerchantSplit => ({
  address: `0x${'5'.repeat(38)}${wallet.slice(-2)}`,
  recipients: [{ address: wallet, bps: 10_000, role: 'merchant' }],
  platformFeeBps: 0,
  partnerFeeBps: 0,
  txHash: `0x${'6'.repeat(64)}`,
  chainId: 31337,
  deployedAt: 1,
});

/** 120 listed shops, with names, descriptions, categories and keywords that the filters pick apart. */
const listedShops: Seed[] = Array.from({ length: 120 }, (_, i) => ({
  wallet: walletOf(i + 1),
  slug: `${prefixes[i % 4]}-${pad(i)}`,
  name: i % 10 === 0 ? `Blue Moon ${i}` : `Shop number ${i}`,
  description: i % 7 === 0 ? 'A small Roastery by the sea' : 'Everything you need',
  categories: i % 3 === 0 ? [pool[i % 5]!, pool[(i + 1) % 5]!] : [pool[i % 5]!],
  keywords: i % 4 === 0 ? [`kw${i % 6}`, 'Organic'] : [`kw${i % 6}`],
  brandLogoUrl: i % 2 === 0 ? `https://cdn.example.com/logo-${i}.png` : '',
  listed: true,
  split: true,
}));

/** Shops that must never appear, each matching every filter the tests use. */
const hidden = (n: number, fields: Partial<Seed>): Seed => ({
  wallet: walletOf(1000 + n),
  slug: `hidden-${pad(n)}`,
  name: `Hidden Blue Moon ${n}`,
  description: 'A small Roastery by the sea',
  categories: ['coffee', 'tea'],
  keywords: ['kw0', 'Organic'],
  brandLogoUrl: '',
  listed: true,
  split: true,
  ...fields,
});
const hiddenShops: Seed[] = [
  hidden(1, { listed: false }),
  hidden(2, { listed: false }),
  hidden(3, { listed: false, split: false }),
  hidden(4, { split: false }),
  hidden(5, { split: false }),
  hidden(6, { legacy: true }),
  hidden(7, { legacy: true }),
  hidden(8, { slug: null }),
];

const shopOf = (seed: Seed): ShopConfig => {
  const shop = defaultShopConfig();
  return {
    ...shop,
    branding: { ...shop.branding, name: seed.name, description: seed.description, brandLogoUrl: seed.brandLogoUrl },
    directory: { slug: seed.slug, categories: seed.categories, keywords: seed.keywords, industryPack: 'retail', listed: seed.listed },
    updatedAt: 1,
  };
};

const seed = async (deps: AppDeps, shop: Seed) => {
  const fields = { shop: shopOf(shop), split: shop.split ? splitFor(shop.wallet) : null };
  if (shop.legacy) await deps.merchants.create(shop.wallet, { ...newMerchant(shop.wallet, 1), ...fields });
  else await updateMerchant(deps, shop.wallet, (merchant) => ({ merchant: { ...merchant, ...fields }, result: undefined }));
};

/** What the directory should answer, worked out from the seeds alone: listed shops, by slug. */
const expected = (filter: (shop: Seed) => boolean = () => true) =>
  listedShops
    .filter(filter)
    .map((shop) => shop.slug!)
    .sort();
const searchable = (shop: Seed) => [shop.name, shop.description, ...shop.categories, ...shop.keywords].join(' ').toLowerCase();

describe.each(allStores)('the shop directory on the $name store', (store) => {
  let deps: AppDeps;
  const list = (params: Record<string, string> = {}, ownWallet?: string) => listDirectory(deps, DirectoryQuery.parse(params), ownWallet);
  const slugs = async (params: Record<string, string> = {}) => (await list({ limit: '50', ...params })).directory.map((entry) => entry.slug);
  /** Every match, walking the pages. */
  const everything = async (params: Record<string, string> = {}) => {
    const found: string[] = [];
    for (let offset = 0; ; offset += 50) {
      const page = await slugs({ ...params, offset: String(offset) });
      found.push(...page);
      if (page.length < 50) return found;
    }
  };

  beforeAll(async () => {
    deps = await store.make({ clock: tickingClock() });
    // Written out of slug order, a few at a time.
    const order = [...listedShops, ...hiddenShops].map((_, index, all) => all[(index * 37) % all.length]!);
    expect(new Set(order).size).toBe(listedShops.length + hiddenShops.length);
    for (let start = 0; start < order.length; start += 16) await Promise.all(order.slice(start, start + 16).map((shop) => seed(deps, shop)));
  });

  it('answers each window of the listed shops by slug exactly: no duplicate, no gap, the right count', async () => {
    const all = expected();
    expect(all).toHaveLength(120);
    for (const limit of [1, 3, 7, 20, 50]) {
      for (const offset of [0, 1, 6, 19, 20, 49, 50, 100, 113, 119, 120, 121, 1000]) {
        const answer = await list({ limit: String(limit), offset: String(offset) });
        const want = all.slice(offset, offset + limit);
        expect(answer.directory.map((entry) => entry.slug), `offset ${offset}, limit ${limit}`).toEqual(want);
        expect(answer.meta).toEqual({ totalReturned: want.length, limit, offset, brandContext: deps.settings.brandKey });
      }
    }
  });

  it.each([7, 20, 50])('walks every page of %i to the end: each shop once, in slug order', async (limit) => {
    const seen: string[] = [];
    let pages = 0;
    for (let offset = 0; ; offset += limit) {
      const { directory, meta } = await list({ limit: String(limit), offset: String(offset) });
      expect(meta.totalReturned).toBe(directory.length);
      seen.push(...directory.map((entry) => entry.slug));
      pages++;
      if (directory.length < limit) break;
    }
    expect(seen).toEqual(expected());
    expect(pages).toBe(Math.floor(120 / limit) + 1);
  });

  it('defaults to the first 20 and answers the interface document’s entry', async () => {
    const answer = await list();
    expect(answer.ok).toBe(true);
    expect(answer.directory.map((entry) => entry.slug)).toEqual(expected().slice(0, 20));
    expect(answer.meta).toEqual({ totalReturned: 20, limit: 20, offset: 0, brandContext: deps.settings.brandKey });
    const first = answer.directory[0]!;
    const shop = listedShops.find((candidate) => candidate.slug === first.slug)!;
    expect(first).toEqual({
      name: shop.name,
      slug: shop.slug,
      description: shop.description,
      categories: shop.categories,
      keywords: shop.keywords,
      industryPack: 'retail',
      theme: { brandLogoUrl: shop.brandLogoUrl, coverPhotoUrl: '' },
    });
  });

  it('filters by categories: exact values, any of them', async () => {
    expect(await everything({ categories: 'bikes' })).toEqual(expected((shop) => shop.categories.includes('bikes')));
    const anyOf = expected((shop) => shop.categories.includes('books') || shop.categories.includes('art'));
    expect(await everything({ categories: 'books,art' })).toEqual(anyOf);
    expect(await everything({ categories: ' art , books,,art' })).toEqual(anyOf);
    expect(anyOf.length).toBeGreaterThan(expected((shop) => shop.categories.includes('books')).length);
    expect(await everything({ categories: 'Coffee' })).toEqual([]);
    expect(await everything({ categories: 'coff' })).toEqual([]);
    expect(await everything({ categories: 'nothing-here' })).toEqual([]);
  });

  it('filters by keywords the same way', async () => {
    expect(await everything({ keywords: 'Organic' })).toEqual(expected((shop) => shop.keywords.includes('Organic')));
    expect(await everything({ keywords: 'kw1,kw5' })).toEqual(expected((shop) => shop.keywords.includes('kw1') || shop.keywords.includes('kw5')));
    expect(await everything({ keywords: 'organic' })).toEqual([]);
  });

  it('searches name, keywords, categories and description with q, whatever the case', async () => {
    const blue = expected((shop) => shop.name.startsWith('Blue Moon'));
    expect(blue).toHaveLength(12);
    for (const q of ['blue moon', 'BLUE MOON', 'Blue Moon', '  bLuE mOoN  ']) expect(await everything({ q })).toEqual(blue);
    expect(await everything({ q: 'ROASTERY' })).toEqual(expected((shop) => shop.description.includes('Roastery')));
    expect(await everything({ q: 'organic' })).toEqual(expected((shop) => shop.keywords.includes('Organic')));
    expect(await everything({ q: 'Bikes' })).toEqual(expected((shop) => shop.categories.includes('bikes')));
    const number11 = expected((shop) => searchable(shop).includes('number 11'));
    // 11 and 111–119 ('Blue Moon 110' has no 'number').
    expect(number11).toHaveLength(10);
    expect(await everything({ q: 'number 11' })).toEqual(number11);
    expect(await everything({ q: 'no such shop' })).toEqual([]);
  });

  it('combines the filters: all of them hold', async () => {
    const params = { q: 'moon', categories: 'coffee,tea', keywords: 'kw0,kw4,Organic' };
    const want = expected(
      (shop) =>
        searchable(shop).includes('moon') &&
        shop.categories.some((category) => ['coffee', 'tea'].includes(category)) &&
        shop.keywords.some((keyword) => ['kw0', 'kw4', 'Organic'].includes(keyword)),
    );
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(expected((shop) => searchable(shop).includes('moon')).length);
    expect(await everything(params)).toEqual(want);
    expect((await list({ ...params, limit: '2', offset: '1' })).directory.map((entry) => entry.slug)).toEqual(want.slice(1, 3));
  });

  it('never lists unlisted shops, shops without a split or a slug, or documents stored before the directory fields', async () => {
    const all = await everything();
    expect(all).toEqual(expected());
    expect(all.filter((slug) => slug.startsWith('hidden'))).toEqual([]);
    expect(await everything({ q: 'hidden' })).toEqual([]);
    expect(await everything({ categories: 'coffee', keywords: 'Organic', q: 'roastery' })).not.toContain('hidden-001');
  });

  it('marks the signed-in wallet’s own shop, and only that one', async () => {
    const mine = listedShops[5]!;
    const { directory } = await list({ limit: '50' }, mine.wallet.toUpperCase().replace('0X', '0x'));
    expect(directory.filter((entry) => entry.own)).toEqual([expect.objectContaining({ slug: mine.slug, own: true })]);
    expect((await list({ limit: '50' })).directory.some((entry) => 'own' in entry)).toBe(false);
  });

  it.each([
    [{ limit: '51' }, 'limit'],
    [{ limit: '0' }, 'limit'],
    [{ offset: '-1' }, 'offset'],
    [{ offset: '10001' }, 'offset'],
    [{ limit: 'ten' }, 'limit'],
    [{ q: 'a\u0000b' }, 'q'],
    [{ categories: Array.from({ length: 21 }, (_, n) => `c${n}`).join(',') }, 'categories'],
  ])('refuses %j, naming %s', (params, field) => {
    const parsed = DirectoryQuery.safeParse(params);
    expect(parsed.success).toBe(false);
    expect(describeZodError(parsed.error!).field).toBe(field);
  });
});

describe.each(allStores)('the directory fields follow every merchant write on the $name store', (store) => {
  let deps: AppDeps;
  const wallet = walletOf(0xabc);
  const platformWallet = `0x${'9'.repeat(40)}`;
  const chain = {
    chainId: 31337,
    deploySplit: async () => ({ address: `0x${'7'.repeat(40)}`, txHash: `0x${'8'.repeat(64)}`, blockNumber: 1, created: true }),
  } as unknown as Chain;
  const slugs = async (params: Record<string, string> = {}) =>
    (await listDirectory(deps, DirectoryQuery.parse(params))).directory.map((entry) => entry.slug);
  const configure = (update: Record<string, unknown>) => updateShopConfig(deps, wallet, ShopConfigUpdate.parse(update));

  beforeEach(async () => {
    const made = await store.make({ clock: tickingClock(), chain });
    deps = { ...made, settings: { ...made.settings, platformWallet } };
  });

  it('lists a shop once its configuration lists it and its split is deployed, and follows later changes', async () => {
    await configure({ branding: { name: 'Night Owl Books' }, directory: { slug: 'night-owl', categories: ['books'], listed: true } });
    expect(await slugs()).toEqual([]);
    await deploySplit(deps, wallet);
    expect(await slugs()).toEqual(['night-owl']);
    expect(await slugs({ q: 'owl books' })).toEqual(['night-owl']);

    await configure({ branding: { name: 'Early Bird Books' } });
    expect(await slugs({ q: 'owl' })).toEqual([]);
    expect(await slugs({ q: 'early bird' })).toEqual(['night-owl']);

    await configure({ directory: { slug: 'early-bird', categories: ['books'], listed: false } });
    expect(await slugs()).toEqual([]);
    await configure({ directory: { slug: 'early-bird', categories: ['books', 'cafe'], listed: true } });
    expect(await slugs({ categories: 'cafe' })).toEqual(['early-bird']);
  });

  it('lists a document stored before the directory fields once it is written again', async () => {
    const shop: ShopConfig = { ...defaultShopConfig(), directory: { slug: 'old-shop', categories: [], keywords: [], industryPack: 'general', listed: true }, updatedAt: 1 };
    await deps.merchants.create(wallet, { ...newMerchant(wallet, 1), shop, split: splitFor(wallet) });
    expect(await slugs()).toEqual([]);
    expect(await refreshDirectoryFields(deps, wallet)).toBe(true);
    expect(await slugs()).toEqual(['old-shop']);
    expect(await refreshDirectoryFields(deps, wallet)).toBe(false);
    expect(await refreshDirectoryFields(deps, walletOf(0xdef))).toBe(false);
  });
});
