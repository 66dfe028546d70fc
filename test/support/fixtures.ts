import type { Receipt, ReceiptStatus } from '../../shared/domain/receipt';
import type { Clock } from '../../shared/ports/runtime';
import { InventoryListQuery, InventoryUpsertInput } from '../../shared/domain/inventory';

/** A clock that moves one second per reading, so ordering by time is deterministic. */
export const tickingClock = (start = 1_700_000_000_000): Clock => {
  let now = start;
  return { now: () => (now += 1_000) };
};

export const itemInput = (fields: Record<string, unknown>) => InventoryUpsertInput.parse({ name: 'Item', priceUsd: 1, ...fields });
export const listQuery = (params: Record<string, string> = {}) => InventoryListQuery.parse(params);

/** The core of a stored receipt for tests that set a receipt up directly (not through the use case that makes one). */
export const receiptCore = (fields: { receiptId: string; wallet: string; status: ReceiptStatus; usd: number; label?: string; customerTotalUsd?: number; source?: Receipt['source'] }) => ({
  receiptId: fields.receiptId,
  wallet: fields.wallet,
  brandKey: 'default',
  brandName: 'Test',
  status: fields.status,
  lineItems: [{ label: fields.label ?? 'Sale', priceUsd: fields.usd }],
  totalUsd: fields.usd,
  customerTotalUsd: fields.customerTotalUsd ?? fields.usd,
  jurisdictionCode: null,
  taxRate: null,
  source: fields.source ?? ('terminal' as const),
  createdBy: null,
});
