import { DomainError, describeZodError } from '../domain/errors';
import type { StoredInventoryItem } from '../domain/inventory';
import type { Merchant, MerchantSplit } from '../domain/merchant';
import { toCents } from '../domain/money';
import { OrderRequest } from '../domain/order';
import { priceOrder, type OrderLineInput } from '../domain/pricing';
import { newReceipt, newReceiptId, receiptClaimId, type Receipt } from '../domain/receipt';
import { toReceiptView } from '../domain/receipt-views';
import { taxRateFor } from '../domain/shop';
import { rateToPpm } from '../domain/tax-catalog';
import { webhookTargetProblem } from '../domain/webhook-target';
import type { AppDeps } from './deps';
import { loadMerchant } from './merchants';
import { takeClaim } from './claims';

type OrderDeps = Pick<AppDeps, 'merchants' | 'inventory' | 'receipts' | 'claims' | 'clock' | 'ids' | 'settings'>;

/** Claims a fresh receipt id across all merchants (create-only), so no id is ever reused. */
export const claimReceiptId = async (deps: Pick<AppDeps, 'claims' | 'clock' | 'ids'>, wallet: string): Promise<string> => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const receiptId = newReceiptId(deps.ids.random(10));
    if ((await takeClaim(deps.claims, { id: receiptClaimId(receiptId), owner: wallet, createdAt: deps.clock.now() })).taken) return receiptId;
  }
  throw new Error('could not find a free receipt id');
};

type PricedReceiptDeps = Pick<AppDeps, 'receipts' | 'claims' | 'clock' | 'ids' | 'settings'>;

type PricedInput = { lines: OrderLineInput[]; jurisdictionCode?: string };

/**
 * Claims a given receipt id for this wallet: true when it is newly this wallet's, false when it was
 * already (a retried request that names its receipt); another wallet's id is a conflict.
 */
const claimGivenReceiptId = async (deps: Pick<AppDeps, 'claims' | 'clock'>, wallet: string, receiptId: string): Promise<boolean> => {
  const claimed = await takeClaim(deps.claims, { id: receiptClaimId(receiptId), owner: wallet, createdAt: deps.clock.now() });
  if (claimed.taken) return true;
  if (claimed.held?.value.owner !== wallet) throw new DomainError('conflict', `receipt ${receiptId} belongs to another merchant`);
  return false;
};

/**
 * Prices lines for a shop: the jurisdiction's tax (the requested code, else the shop's default; an
 * unknown code is 400), the shop's processing fee and the deployed split's fees.
 */
export const priceLines = (merchant: Merchant, split: MerchantSplit, input: PricedInput) => {
  const code = input.jurisdictionCode ?? merchant.shop.taxDefaults.defaultJurisdictionCode ?? null;
  const taxRate = code === null ? 0 : taxRateFor(merchant.shop, code);
  if (taxRate === undefined) throw new DomainError('invalid_input', `jurisdictionCode: unknown jurisdiction ${code}`, { field: 'jurisdictionCode' });
  const priced = priceOrder({
    lines: input.lines,
    taxRatePpm: rateToPpm(taxRate),
    processingFeeHundredths: toCents(merchant.shop.processingFeePct),
    feeBps: split.platformFeeBps + split.partnerFeeBps,
  });
  return { code, taxRate, priced };
};

/**
 * What an order and a point-of-sale receipt share: the lines priced (`priceLines`), stored as a
 * `generated` receipt under a freshly claimed id.
 */
export const storePricedReceipt = async (
  deps: PricedReceiptDeps,
  caller: { wallet: string; subscriptionId: string | null },
  merchant: Merchant,
  split: MerchantSplit,
  input: PricedInput & { source: Receipt['source']; extra?: Partial<Receipt>; /** A fixed id (idempotent): the receipt already stored under it is answered. */ receiptId?: string },
): Promise<Receipt> => {
  const { code, taxRate, priced } = priceLines(merchant, split, input);
  const now = deps.clock.now();
  if (input.receiptId && !(await claimGivenReceiptId(deps, caller.wallet, input.receiptId))) {
    const existing = await deps.receipts.get(caller.wallet, input.receiptId);
    if (existing) return existing.value;
  }
  const receiptId = input.receiptId ?? (await claimReceiptId(deps, caller.wallet));
  const receipt: Receipt = newReceipt(
    {
      receiptId,
      wallet: caller.wallet,
      brandKey: deps.settings.brandKey,
      brandName: deps.settings.brandName,
      status: 'generated',
      lineItems: priced.lineItems,
      totalUsd: priced.totalCents / 100,
      customerTotalUsd: priced.totalCents / 100,
      jurisdictionCode: code,
      taxRate,
      source: input.source,
      createdBy: caller.subscriptionId,
    },
    now,
    input.extra,
  );
  await deps.receipts.create(caller.wallet, receipt);
  return receipt;
};

const parseOrder = (body: unknown, development: boolean): OrderRequest => {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items) || items.length === 0) throw new DomainError('items_required', 'at least one item is required', { field: 'items' });
  const parsed = OrderRequest.safeParse(body);
  if (!parsed.success) {
    const { field, message } = describeZodError(parsed.error);
    throw new DomainError('invalid_input', message, { field });
  }
  // The same target rules as for a receipt created whole (and as the delivery side applies).
  const webhookUrl = parsed.data.webhook_url;
  const problem = webhookUrl === undefined ? undefined : webhookTargetProblem(webhookUrl, development);
  if (problem) throw new DomainError('invalid_input', `webhook_url: ${problem}`, { field: 'webhook_url' });
  return parsed.data;
};

/**
 * An order checked against the merchant's inventory, ready to price and store: in order, a deployed
 * split (403), the request (400), every item (400), stock (409).
 */
export const prepareOrder = async (deps: Pick<AppDeps, 'merchants' | 'inventory' | 'clock' | 'settings'>, wallet: string, body: unknown) => {
  const merchant = await loadMerchant(deps, wallet);
  const split = merchant.split;
  if (!split) throw new DomainError('split_required', 'deploy a split contract before creating orders');
  const order = parseOrder(body, deps.settings.development);

  const found: StoredInventoryItem[] = [];
  for (const [index, item] of order.items.entries()) {
    const stored = item.id ? await deps.inventory.get(wallet, item.id) : await deps.inventory.findBySku(wallet, item.sku!);
    if (!stored) {
      const ref = item.id ? { id: item.id } : { sku: item.sku };
      throw new DomainError('inventory_item_not_found', `inventory item ${item.id ?? item.sku} not found`, { field: `items.${index}`, ...ref });
    }
    found.push(stored.value);
  }
  const wanted = new Map<string, number>();
  order.items.forEach((item, index) => wanted.set(found[index]!.id, (wanted.get(found[index]!.id) ?? 0) + item.qty));
  for (const item of found) {
    const qty = wanted.get(item.id)!;
    if (item.stockQty >= 0 && item.stockQty < qty) {
      throw new DomainError('insufficient_stock', `only ${item.stockQty} of ${item.sku} in stock`, { sku: item.sku, available: item.stockQty, requested: qty });
    }
  }
  const lines: OrderLineInput[] = order.items.map((item, index) => ({
    label: found[index]!.name,
    sku: found[index]!.sku,
    qty: item.qty,
    unitCents: toCents(found[index]!.priceUsd),
    taxable: found[index]!.taxable,
  }));
  return { merchant, split, order, lines };
};

/**
 * Prices an order from the merchant's inventory and stores it as a `generated` receipt, with the
 * order's webhook_url, redirect_url, transactionId and metadata as a receipt created whole keeps them
 * (its webhook_url takes the place of the shop's default).
 */
export const createOrder = async (deps: OrderDeps, caller: { wallet: string; subscriptionId: string | null }, body: unknown) => {
  const { merchant, split, order, lines } = await prepareOrder(deps, caller.wallet, body);
  const receipt = await storePricedReceipt(deps, caller, merchant, split, {
    lines,
    jurisdictionCode: order.jurisdictionCode,
    source: 'order',
    extra: {
      webhookUrl: order.webhook_url ?? null,
      redirectUrl: order.redirect_url ?? null,
      transactionId: order.transactionId ?? null,
      metadata: order.metadata ?? null,
    },
  });
  return { ok: true as const, receipt: toReceiptView(receipt, deps.settings.baseUrl) };
};
