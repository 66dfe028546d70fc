import { z } from 'zod';
import { Id } from './query-params';
import { ReceiptCreateRequest } from './receipt-request';
import { JurisdictionCode } from './tax-catalog';

export const MAX_ORDER_ITEMS = 100;

const OrderItem = z
  .object({
    sku: z.string().trim().min(1).max(64).optional(),
    id: Id.optional(),
    qty: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000),
  })
  .refine((item) => (item.sku === undefined) !== (item.id === undefined), 'name the item by sku or by id (one of them)')
  // The refinement above, for the OpenAPI document: exactly one of sku and id.
  .meta({ oneOf: [{ required: ['sku'] }, { required: ['id'] }] });

/** The optional fields an order shares with a receipt created whole, under the same rules. */
const { webhook_url, redirect_url, transactionId, metadata } = ReceiptCreateRequest.shape;

export const OrderRequest = z.object({
  items: z.array(OrderItem).min(1).max(MAX_ORDER_ITEMS, `at most ${MAX_ORDER_ITEMS} items`),
  jurisdictionCode: JurisdictionCode.optional(),
  webhook_url,
  redirect_url,
  transactionId,
  metadata,
});
export type OrderRequest = z.output<typeof OrderRequest>;

/**
 * The body as the HTTP layer accepts it: any JSON object. The use case validates it with
 * `OrderRequest` after the split check, so 403 split_required comes before the 400s; the route
 * documents `OrderRequest`.
 */
export const OrderBody = z.looseObject({});
