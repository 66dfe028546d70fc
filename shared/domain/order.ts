import { z } from 'zod';
import { Id } from './query-params';
import { JurisdictionCode } from './tax-catalog';

export const MAX_ORDER_ITEMS = 100;

const OrderItem = z
  .object({
    sku: z.string().trim().min(1).max(64).optional(),
    id: Id.optional(),
    qty: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000),
  })
  .refine((item) => (item.sku === undefined) !== (item.id === undefined), 'name the item by sku or by id (one of them)');

export const OrderRequest = z.object({
  items: z.array(OrderItem).min(1).max(MAX_ORDER_ITEMS, `at most ${MAX_ORDER_ITEMS} items`),
  jurisdictionCode: JurisdictionCode.optional(),
});
export type OrderRequest = z.output<typeof OrderRequest>;

/** The body as the HTTP layer accepts it: any JSON object; the use case validates it after the split check. */
export const OrderBody = z.looseObject({});
