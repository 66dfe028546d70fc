import { beforeEach, describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { updateMerchant } from '../../shared/app/merchants';
import { memoryDeps, setDeps } from '../../shared/composition';
import type { ShopConfigUpdate } from '../../shared/domain/shop';
import { receiptClaimId } from '../../shared/domain/receipt';
import { toCents } from '../../shared/domain/money';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { itemInput } from '../support/fixtures';
import { pricingCases } from '../support/pricing-cases';
import { wallets } from '../support/stores';

let deps: AppDeps;
let merchant: Merchant;
const wallet = wallets.alice;

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

const order = (body: unknown, as: Merchant = merchant) => invoke('orders-create', { method: 'POST', path: '/api/orders', headers: { 'x-subscription-id': as.subscriptionId }, body });

beforeEach(async () => {
  deps = memoryDeps();
  setDeps(deps);
  merchant = await addMerchant(deps, wallet);
});

describe('POST /api/orders prices exactly', () => {
  it.each(pricingCases)('$name', async (testCase) => {
    await withSplit(testCase.platformFeeBps, testCase.partnerFeeBps, { processingFeePct: testCase.processingFeePct });
    for (const item of testCase.items) await upsertInventoryItem(deps, wallet, itemInput(item));
    const answer = await order({ items: testCase.items.map((item) => ({ sku: item.sku, qty: item.qty })), ...(testCase.jurisdictionCode && { jurisdictionCode: testCase.jurisdictionCode }) });
    expect(answer.status).toBe(200);
    const receipt = answer.json.receipt as { lineItems: Array<{ label: string; priceUsd: number; qty?: number; sku?: string }>; totalUsd: number; taxRate: number };
    const { subtotal, tax, fee, total } = testCase.expected;
    const items = receipt.lineItems.slice(0, -2);
    expect(items).toEqual(testCase.items.map((item) => ({ label: item.name, sku: item.sku, qty: item.qty, unitPriceUsd: item.priceUsd, priceUsd: (toCents(item.priceUsd) * item.qty) / 100 })));
    expect(items.reduce((sum, line) => sum + toCents(line.priceUsd), 0)).toBe(subtotal);
    expect(receipt.lineItems.slice(-2)).toEqual([
      { label: 'Tax', priceUsd: tax / 100 },
      { label: 'Processing Fee', priceUsd: fee / 100 },
    ]);
    expect(receipt.totalUsd).toBe(total / 100);
    expect(receipt.taxRate).toBe(testCase.rate);
  });
});

describe('the generated receipt', () => {
  beforeEach(async () => {
    await withSplit(100, 0, {
      processingFeePct: 2,
      taxDefaults: { jurisdictions: [{ code: 'US-CA', name: 'San Francisco', rate: 0.08625 }], defaultJurisdictionCode: 'US-CA' },
    });
    await upsertInventoryItem(deps, wallet, itemInput({ sku: 'MUG', name: 'Mug', priceUsd: 12, stockQty: 3 }));
    await upsertInventoryItem(deps, wallet, itemInput({ sku: 'CARD', name: 'Gift card', priceUsd: 25, taxable: false }));
  });

  it('is status generated, with a claimed long random id, payment URL, jurisdiction and brand', async () => {
    const answer = await order({ items: [{ sku: 'MUG', qty: 2 }] });
    const receipt = answer.json.receipt as Record<string, unknown>;
    expect(receipt).toMatchObject({
      receiptId: expect.stringMatching(/^R-[A-Z2-7]{16}$/),
      status: 'generated',
      currency: 'USD',
      jurisdictionCode: 'US-CA',
      taxRate: 0.08625,
      brandName: deps.settings.brandName,
      createdAt: expect.any(Number),
    });
    expect(receipt.paymentUrl).toBe(`${deps.settings.baseUrl}/pay/${receipt.receiptId}`);
    const id = receipt.receiptId as string;
    expect((await deps.claims.get(receiptClaimId(id), receiptClaimId(id)))?.value.owner).toBe(wallet);
    expect((await deps.receipts.get(wallet, id))?.value).toMatchObject({ status: 'generated', source: 'order', createdBy: merchant.subscriptionId });
  });

  it('uses the shop’s own rate for a code before the catalog, and the catalog for other codes', async () => {
    const own = (await order({ items: [{ sku: 'MUG', qty: 1 }] })).json.receipt as { lineItems: Array<{ priceUsd: number }> };
    expect(own.lineItems[1]).toEqual({ label: 'Tax', priceUsd: 1.04 });
    const catalog = (await order({ items: [{ sku: 'MUG', qty: 1 }], jurisdictionCode: 'US-NY' })).json.receipt as { taxRate: number };
    expect(catalog.taxRate).toBe(0.04);
  });

  it('finds items by id too, and counts the same item twice against stock', async () => {
    const mug = (await deps.inventory.findBySku(wallet, 'MUG'))!.value;
    expect((await order({ items: [{ id: mug.id, qty: 1 }, { sku: 'MUG', qty: 2 }] })).status).toBe(200);
    expect(await order({ items: [{ id: mug.id, qty: 2 }, { sku: 'MUG', qty: 2 }] })).toMatchObject({ status: 409, json: { error: 'insufficient_stock', sku: 'MUG', available: 3, requested: 4 } });
  });
});

describe('the receipt creation request’s optional fields', () => {
  const as = () => ({ 'x-subscription-id': merchant.subscriptionId });
  const hook = 'http://127.0.0.1:9/order-hook';
  const queued = () => (deps.queue as MemoryEventQueue).take('webhooks').map((entry) => entry.message as { target: string; body: string });
  const report = (id: string, status: string) => invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers: as(), body: { id, status } });

  beforeEach(async () => {
    await withSplit(100, 0, { webhookUrl: 'http://127.0.0.1:9/shop-default' });
    await upsertInventoryItem(deps, wallet, itemInput({ sku: 'MUG', name: 'Mug', priceUsd: 12 }));
  });

  it('are accepted, stored on the receipt and shown by GET /api/receipts/{id}', async () => {
    const answer = await order({
      items: [{ sku: 'MUG', qty: 1 }],
      webhook_url: hook,
      redirect_url: 'https://shop.example.com/thanks',
      transactionId: 'T-42',
      metadata: { table: 4, note: 'window seat' },
    });
    expect(answer.status).toBe(200);
    const receipt = answer.json.receipt as { receiptId: string };
    expect(answer.json.receipt).toMatchObject({ transactionId: 'T-42', metadata: { table: 4, note: 'window seat' } });
    const read = await invoke('receipts-get', { path: `/api/receipts/${receipt.receiptId}`, headers: as() });
    expect(read).toMatchObject({ status: 200, json: { receiptId: receipt.receiptId, status: 'generated', transactionId: 'T-42', metadata: { table: 4, note: 'window seat' } } });
    expect((await deps.receipts.get(wallet, receipt.receiptId))?.value).toMatchObject({ webhookUrl: hook, redirectUrl: 'https://shop.example.com/thanks' });
  });

  it('are optional: without them the receipt has none and its events go to the shop’s default URL', async () => {
    const receipt = (await order({ items: [{ sku: 'MUG', qty: 1 }] })).json.receipt as { receiptId: string; transactionId: unknown; metadata: unknown };
    expect(receipt).toMatchObject({ transactionId: null, metadata: null });
    await report(receipt.receiptId, 'link_opened');
    expect(queued().map((message) => message.target)).toEqual(['http://127.0.0.1:9/shop-default']);
  });

  it('are echoed in webhooks, sent to the order’s webhook_url rather than the shop’s default', async () => {
    const receipt = (await order({ items: [{ sku: 'MUG', qty: 1 }], webhook_url: hook, transactionId: 'T-43', metadata: { table: 7 } })).json.receipt as { receiptId: string };
    expect(await report(receipt.receiptId, 'link_opened')).toMatchObject({ status: 200, json: { previousStatus: 'generated', status: 'link_opened' } });
    const [event, ...rest] = queued();
    expect(rest).toEqual([]);
    expect(event!.target).toBe(hook);
    expect(JSON.parse(event!.body)).toMatchObject({ receiptId: receipt.receiptId, status: 'link_opened', transactionId: 'T-43', metadata: { table: 7 } });
  });

  it.each([
    [{ webhook_url: 'not a url' }, 'webhook_url'],
    [{ webhook_url: 42 }, 'webhook_url'],
    [{ webhook_url: `https://hooks.example.com/${'x'.repeat(2048)}` }, 'webhook_url'],
    [{ redirect_url: 'ftp://shop.example.com/thanks' }, 'redirect_url'],
    [{ redirect_url: 'not a url' }, 'redirect_url'],
    [{ transactionId: 'x'.repeat(201) }, 'transactionId'],
    [{ transactionId: 7 }, 'transactionId'],
    [{ metadata: 'text' }, 'metadata'],
    [{ metadata: [1, 2] }, 'metadata'],
    [{ metadata: { blob: 'x'.repeat(4100) } }, 'metadata'],
  ])('%j → 400 invalid_input naming %s', async (extra, field) => {
    expect(await order({ items: [{ sku: 'MUG', qty: 1 }], ...extra })).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
  });

  it('refuses http, local and private webhook targets outside development, as for receipts', async () => {
    setDeps({ ...deps, settings: { ...deps.settings, development: false } });
    for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://192.168.1.10/x', 'https://metadata.internal/x', 'https://[::ffff:127.0.0.1]/x']) {
      expect(await order({ items: [{ sku: 'MUG', qty: 1 }], webhook_url: url })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'webhook_url' } });
    }
    expect((await order({ items: [{ sku: 'MUG', qty: 1 }], webhook_url: 'https://hooks.example.com/orders' })).status).toBe(200);
  });

  it('are checked before the items are looked up, and after the split', async () => {
    expect(await order({ items: [{ sku: 'NOPE', qty: 1 }], metadata: 'text' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'metadata' } });
    expect(await order({ items: [{ sku: 'NOPE', qty: 1 }], webhook_url: 'not a url' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'webhook_url' } });
    const other = await addMerchant(deps, wallets.bob);
    expect(await order({ items: [{ sku: 'MUG', qty: 1 }], webhook_url: 'not a url', metadata: 'text' }, other)).toMatchObject({ status: 403, json: { error: 'split_required' } });
  });
});

describe('order errors', () => {
  it('answers 403 split_required without a deployed split, before looking at the items', async () => {
    expect(await order({ items: [{ sku: 'X', qty: 1 }] })).toMatchObject({ status: 403, json: { error: 'split_required' } });
    expect(await order({ items: [] })).toMatchObject({ status: 403, json: { error: 'split_required' } });
  });

  describe('with a split', () => {
    beforeEach(async () => {
      await withSplit(100, 0);
      await upsertInventoryItem(deps, wallet, itemInput({ sku: 'MUG', name: 'Mug', priceUsd: 12, stockQty: 1 }));
    });

    it.each([
      [{}, 'items_required'],
      [{ items: [] }, 'items_required'],
      [{ items: 'MUG' }, 'items_required'],
    ])('%j → 400 %s', async (body, code) => {
      expect(await order(body)).toMatchObject({ status: 400, json: { error: code } });
    });

    it.each([
      [{ items: [{ sku: 'MUG', qty: 0 }] }, 'items.0.qty'],
      [{ items: [{ sku: 'MUG', qty: 1.5 }] }, 'items.0.qty'],
      [{ items: [{ sku: 'MUG' }] }, 'items.0.qty'],
      [{ items: [{ qty: 1 }] }, 'items.0'],
      [{ items: [{ sku: 'MUG', id: 'itm_x', qty: 1 }] }, 'items.0'],
      [{ items: Array.from({ length: 101 }, () => ({ sku: 'MUG', qty: 1 })) }, 'items'],
      [{ items: [{ sku: 'MUG', qty: 1 }], jurisdictionCode: 'california' }, 'jurisdictionCode'],
      [{ items: [{ sku: 'MUG', qty: 1 }], jurisdictionCode: 'XX-ZZ' }, 'jurisdictionCode'],
    ])('%j → 400 invalid_input naming %s', async (body, field) => {
      expect(await order(body)).toMatchObject({ status: 400, json: { error: 'invalid_input', field } });
    });

    it('answers 400 inventory_item_not_found naming the sku or the id', async () => {
      expect(await order({ items: [{ sku: 'MUG', qty: 1 }, { sku: 'NOPE', qty: 1 }] })).toMatchObject({ status: 400, json: { error: 'inventory_item_not_found', sku: 'NOPE', field: 'items.1' } });
      expect(await order({ items: [{ id: 'itm_nope', qty: 1 }] })).toMatchObject({ status: 400, json: { error: 'inventory_item_not_found', id: 'itm_nope' } });
    });

    it('answers 409 insufficient_stock for tracked stock below the quantity', async () => {
      expect(await order({ items: [{ sku: 'MUG', qty: 2 }] })).toMatchObject({ status: 409, json: { error: 'insufficient_stock' } });
    });

    it('answers 403 forbidden without orders:create', async () => {
      const reader = await addMerchant(deps, wallet, { scopes: ['inventory:read'] });
      expect(await order({ items: [{ sku: 'MUG', qty: 1 }] }, reader)).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    });
  });
});
