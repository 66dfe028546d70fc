import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { updateMerchant } from '../../shared/app/merchants';
import { memoryDeps, setDeps } from '../../shared/composition';
import { receiptClaimId } from '../../shared/domain/receipt';
import type { ShopConfigUpdate } from '../../shared/domain/shop';
import { itemInput } from '../support/fixtures';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { wallets } from '../support/stores';

let deps: AppDeps;
let merchant: Merchant;
const wallet = wallets.alice;

const california = { jurisdictions: [{ code: 'US-CA', name: 'California', rate: 0.0725 }], defaultJurisdictionCode: 'US-CA' };

/** Records a deployed split in the store directly: these tests are about pricing, not the chain. */
const withSplit = (platformFeeBps: number, partnerFeeBps: number, shop: ShopConfigUpdate = {}) =>
  updateMerchant(deps, wallet, (current, now) => ({
    merchant: {
      ...current,
      shop: { ...current.shop, ...shop },
      split: { address: '0x' + '5'.repeat(40), recipients: [], platformFeeBps, partnerFeeBps, txHash: '0x' + '6'.repeat(64), chainId: 31337, deployedAt: now },
    },
    result: undefined,
  }));

const sell = (body: unknown, as: Merchant = merchant) =>
  invoke('receipts-terminal', { method: 'POST', path: '/api/receipts/terminal', headers: { 'x-subscription-id': as.subscriptionId }, body });

type Line = { label: string; priceUsd: number; qty?: number; unitPriceUsd?: number; sku?: string };
type View = { receiptId: string; status: string; lineItems: Line[]; totalUsd: number; customerTotalUsd: number; jurisdictionCode: string | null; taxRate: number | null; paymentUrl: string };

beforeEach(async () => {
  deps = memoryDeps();
  setDeps(deps);
  merchant = await addMerchant(deps, wallet);
});

describe('POST /api/receipts/terminal prices to the cent', () => {
  // Worked by hand: tax = round½↑(amount × rate); total = round½↑((amount + tax) × (10000 + 100p) / (10000 − F)).
  it.each([
    {
      name: '10.00 in California at 1.5 %, split fees 100 bps',
      fees: [100, 0],
      shop: { processingFeePct: 1.5, taxDefaults: california },
      body: { amountUsd: 10 },
      // tax 72.5 → 73 cents; (1073 × 10150) / 9900 = 1100.096 → 1100
      lines: [{ label: 'Sale', qty: 1, unitPriceUsd: 10, priceUsd: 10 }, { label: 'Tax', priceUsd: 0.73 }, { label: 'Processing Fee', priceUsd: 0.27 }],
      total: 11,
      jurisdiction: ['US-CA', 0.0725],
    },
    {
      name: '19.99 labelled, in New York from the catalog, at 2.9 %, fees 100 + 50 bps',
      fees: [100, 50],
      shop: { processingFeePct: 2.9, taxDefaults: california },
      body: { amountUsd: 19.99, label: 'Table 4', jurisdictionCode: 'US-NY' },
      // tax 79.96 → 80; (2079 × 10290) / 9850 = 2171.87 → 2172
      lines: [{ label: 'Table 4', qty: 1, unitPriceUsd: 19.99, priceUsd: 19.99 }, { label: 'Tax', priceUsd: 0.8 }, { label: 'Processing Fee', priceUsd: 0.93 }],
      total: 21.72,
      jurisdiction: ['US-NY', 0.04],
    },
    {
      name: '1234.56 in California at 1.5 %, fees 100 bps',
      fees: [100, 0],
      shop: { processingFeePct: 1.5, taxDefaults: california },
      body: { amountUsd: 1234.56 },
      // tax 8950.56 → 8951; (132407 × 10150) / 9900 = 135750.61 → 135751
      lines: [{ label: 'Sale', qty: 1, unitPriceUsd: 1234.56, priceUsd: 1234.56 }, { label: 'Tax', priceUsd: 89.51 }, { label: 'Processing Fee', priceUsd: 33.44 }],
      total: 1357.51,
      jurisdiction: ['US-CA', 0.0725],
    },
    {
      name: 'one cent, no jurisdiction, no processing fee',
      fees: [100, 0],
      shop: { processingFeePct: 0 },
      body: { amountUsd: 0.01 },
      // no tax; 1 × 10000 / 9900 = 1.01 → 1
      lines: [{ label: 'Sale', qty: 1, unitPriceUsd: 0.01, priceUsd: 0.01 }, { label: 'Tax', priceUsd: 0 }, { label: 'Processing Fee', priceUsd: 0 }],
      total: 0.01,
      jurisdiction: [null, 0],
    },
  ])('$name', async (testCase) => {
    await withSplit(testCase.fees[0]!, testCase.fees[1]!, testCase.shop);
    const answer = await sell(testCase.body);
    expect(answer.status).toBe(201);
    const receipt = answer.json.receipt as View;
    expect(receipt.lineItems).toEqual(testCase.lines);
    expect(receipt.totalUsd).toBe(testCase.total);
    expect(receipt.customerTotalUsd).toBe(testCase.total);
    expect([receipt.jurisdictionCode, receipt.taxRate]).toEqual(testCase.jurisdiction);
    const cents = receipt.lineItems.reduce((sum, line) => sum + Math.round(line.priceUsd * 100), 0);
    expect(cents).toBe(Math.round(testCase.total * 100));
  });

  it('prices an amount exactly as an order of one item at that price', async () => {
    await withSplit(100, 50, { processingFeePct: 2.9, taxDefaults: california });
    await upsertInventoryItem(deps, wallet, itemInput({ sku: 'LUNCH', name: 'Lunch', priceUsd: 23.47 }));
    const order = await invoke('orders-create', { method: 'POST', path: '/api/orders', headers: { 'x-subscription-id': merchant.subscriptionId }, body: { items: [{ sku: 'LUNCH', qty: 1 }] } });
    const sale = await sell({ amountUsd: 23.47, label: 'Lunch' });
    const ordered = order.json.receipt as View;
    const sold = sale.json.receipt as View;
    expect(sold.lineItems.slice(1)).toEqual(ordered.lineItems.slice(1));
    expect(sold.lineItems[0]).toEqual({ label: 'Lunch', qty: 1, unitPriceUsd: 23.47, priceUsd: 23.47 });
    expect(sold.totalUsd).toBe(ordered.totalUsd);
  });
});

describe('the point-of-sale receipt', () => {
  beforeEach(() => withSplit(100, 0, { processingFeePct: 1.5, taxDefaults: california }));

  it('is generated under a claimed long random id, with its payment link and QR code', async () => {
    const answer = await sell({ amountUsd: 4.5, label: 'Coffee' });
    expect(answer.status).toBe(201);
    const receipt = answer.json.receipt as View;
    expect(receipt).toMatchObject({ receiptId: expect.stringMatching(/^R-[A-Z2-7]{16}$/), status: 'generated' });
    const id = receipt.receiptId;
    const base = deps.settings.baseUrl;
    expect(answer.json).toMatchObject({ ok: true, paymentUrl: `${base}/pay/${id}`, qrUrl: `${base}/api/portal/${id}/qr.svg` });
    expect(receipt.paymentUrl).toBe(`${base}/pay/${id}`);
    expect((await deps.claims.get(receiptClaimId(id), receiptClaimId(id)))?.value.owner).toBe(wallet);
    expect((await deps.receipts.get(wallet, id))?.value).toMatchObject({ status: 'generated', source: 'terminal', createdBy: merchant.subscriptionId, wallet });
  });

  it('gets a new id each time', async () => {
    const ids = new Set<string>();
    for (let n = 0; n < 5; n++) ids.add(((await sell({ amountUsd: 1 })).json.receipt as View).receiptId);
    expect(ids.size).toBe(5);
  });

  it('can be read back with GET /api/receipts/{id}', async () => {
    // tax 14.5 → 15 cents; (215 × 10150) / 9900 = 220.43 → 220
    const id = ((await sell({ amountUsd: 2 })).json.receipt as View).receiptId;
    expect(await invoke('receipts-get', { path: `/api/receipts/${id}`, headers: { 'x-subscription-id': merchant.subscriptionId } })).toMatchObject({ status: 200, json: { receiptId: id, status: 'generated', totalUsd: 2.2 } });
  });
});

describe('point-of-sale errors', () => {
  it('answers 403 split_required without a deployed split, and stores nothing', async () => {
    expect(await sell({ amountUsd: 10 })).toMatchObject({ status: 403, json: { error: 'split_required' } });
    expect((await deps.receipts.listByWallet(wallet, { limit: 10 })).receipts).toEqual([]);
  });

  it('answers 403 forbidden without receipts:write', async () => {
    await withSplit(100, 0);
    for (const scopes of [['receipts:read'], ['orders:create']] as const) {
      const reader = await addMerchant(deps, wallet, { scopes: [...scopes] });
      expect(await sell({ amountUsd: 10 }, reader)).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    }
    expect((await deps.receipts.listByWallet(wallet, { limit: 10 })).receipts).toEqual([]);
  });

  describe('with a split', () => {
    beforeEach(() => withSplit(100, 0, { taxDefaults: california }));

    it.each([
      [{}, 'amountUsd'],
      [{ amountUsd: 0 }, 'amountUsd'],
      [{ amountUsd: 0.001 }, 'amountUsd'],
      [{ amountUsd: -5 }, 'amountUsd'],
      [{ amountUsd: 1.005 }, 'amountUsd'],
      [{ amountUsd: '10' }, 'amountUsd'],
      [{ amountUsd: null }, 'amountUsd'],
      [{ amountUsd: 1e12 }, 'amountUsd'],
      [{ amountUsd: 10, label: '' }, 'label'],
      [{ amountUsd: 10, label: 'x'.repeat(201) }, 'label'],
      [{ amountUsd: 10, jurisdictionCode: 'california' }, 'jurisdictionCode'],
      [{ amountUsd: 10, jurisdictionCode: 'XX-ZZ' }, 'jurisdictionCode'],
    ])('%j → 400 invalid_input naming %s, and stores nothing', async (body, field) => {
      expect(await sell(body)).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
      expect((await deps.receipts.listByWallet(wallet, { limit: 10 })).receipts).toEqual([]);
    });

    it('answers 400 for a body that is not JSON', async () => {
      expect(await sell('{"amountUsd": ')).toMatchObject({ status: 400, json: { error: 'invalid_input' } });
    });
  });
});
