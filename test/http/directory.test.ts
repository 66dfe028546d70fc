import { beforeAll, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { updateMerchant } from '../../shared/app/merchants';
import { updateShopConfig } from '../../shared/app/shop-config';
import { memoryDeps, setDeps } from '../../shared/composition';
import { ShopConfigUpdate } from '../../shared/domain/shop';
import { invoke } from '../support/http';

let deps: AppDeps;

const shops = [
  { wallet: `0x${'c1'.repeat(20)}`, slug: 'corner-cafe', name: 'Corner Café', categories: ['coffee'], keywords: ['espresso'], split: true },
  { wallet: `0x${'c2'.repeat(20)}`, slug: 'bean-there', name: 'Bean There', categories: ['coffee', 'tea'], keywords: ['beans'], split: true },
  { wallet: `0x${'c3'.repeat(20)}`, slug: 'tea-time', name: 'Tea Time', categories: ['tea'], keywords: ['leaves'], split: true },
  { wallet: `0x${'c4'.repeat(20)}`, slug: 'no-split-yet', name: 'No Split Coffee', categories: ['coffee'], keywords: [], split: false },
];

beforeAll(async () => {
  deps = memoryDeps();
  setDeps(deps);
  for (const shop of shops) {
    await updateShopConfig(
      deps,
      shop.wallet,
      ShopConfigUpdate.parse({
        branding: { name: shop.name, description: `${shop.name}, since 1999`, brandLogoUrl: `https://cdn.example.com/${shop.slug}.png` },
        directory: { slug: shop.slug, categories: shop.categories, keywords: shop.keywords, industryPack: 'restaurant', listed: true },
      }),
    );
    if (shop.split) {
      await updateMerchant(deps, shop.wallet, (merchant, now) => ({
        merchant: { ...merchant, split: { address: `0x${'5'.repeat(40)}`, recipients: [], platformFeeBps: 0, partnerFeeBps: 0, txHash: `0x${'6'.repeat(64)}`, chainId: 31337, deployedAt: now } },
        result: undefined,
      }));
    }
  }
});

const get = (query: string) => invoke('directory-shops', { path: `/api/directory/shops${query}` });

describe('GET /api/directory/shops', () => {
  it('answers listed shops with a split, by slug, without a key', async () => {
    const answer = await get('');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      ok: true,
      directory: ['bean-there', 'corner-cafe', 'tea-time'].map((slug) => expect.objectContaining({ slug })),
      meta: { totalReturned: 3, limit: 20, offset: 0, brandContext: deps.settings.brandKey },
    });
    expect((answer.json.directory as unknown[])[1]).toEqual({
      name: 'Corner Café',
      slug: 'corner-cafe',
      description: 'Corner Café, since 1999',
      categories: ['coffee'],
      keywords: ['espresso'],
      industryPack: 'restaurant',
      theme: { brandLogoUrl: 'https://cdn.example.com/corner-cafe.png', coverPhotoUrl: '' },
    });
  });

  it('searches and filters from the query string, a window at a time', async () => {
    const slugs = async (query: string) => ((await get(query)).json.directory as Array<{ slug: string }>).map((entry) => entry.slug);
    expect(await slugs('?q=CAF%C3%89')).toEqual(['corner-cafe']);
    expect(await slugs('?categories=tea')).toEqual(['bean-there', 'tea-time']);
    expect(await slugs('?categories=coffee&keywords=espresso,leaves')).toEqual(['corner-cafe']);
    expect(await slugs('?q=coffee&categories=tea')).toEqual(['bean-there']);
    const window = await get('?limit=1&offset=1');
    expect(window.json).toMatchObject({ directory: [{ slug: 'corner-cafe' }], meta: { totalReturned: 1, limit: 1, offset: 1 } });
    expect(await get('?offset=3')).toMatchObject({ status: 200, json: { directory: [], meta: { totalReturned: 0, offset: 3 } } });
  });

  it.each([
    ['?limit=51', 'limit'],
    ['?limit=0', 'limit'],
    ['?offset=-1', 'offset'],
    ['?offset=ten', 'offset'],
    ['?q=a%00b', 'q'],
  ])('answers 400 invalid_input for %s, naming %s', async (query, field) => {
    expect(await get(query)).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
  });
});
