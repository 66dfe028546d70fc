import { buildInventoryItem, toInventoryItemView, type InventoryUpsertInput } from '../domain/inventory';
import { DomainError } from '../domain/errors';
import { paymentUrlFor, receiptStatuses } from '../domain/receipt';
import type { ReceiptCreateRequest } from '../domain/receipt-request';
import type { AppDeps } from './deps';
import { deleteInventoryItem } from './inventory-delete';
import { newInventoryId, upsertInventoryItem } from './inventory-upsert';
import { orDegraded } from './outbox';
import { createReceipt, reportReceiptStatus } from './receipts';

/**
 * The writes that keep working while the store is unreachable (degraded mode: docs/architecture.md): each runs
 * normally, or is accepted into the outbox with the answer it would have given.
 */
export const upsertInventoryOrAccept = (deps: AppDeps, wallet: string, input: InventoryUpsertInput) =>
  orDegraded(deps, () => upsertInventoryItem(deps, wallet, input), (acceptedAt) => {
    const id = input.id ?? newInventoryId(deps.ids);
    return {
      operation: { kind: 'inventory-upsert', wallet, input: { ...input, id } },
      data: { ok: true as const, item: toInventoryItemView(buildInventoryItem(input, { id, wallet, createdAt: acceptedAt }, acceptedAt)) },
    };
  });

export const deleteInventoryOrAccept = (deps: AppDeps, wallet: string, id: string | undefined) => {
  if (!id) throw new DomainError('id_required', 'query parameter id is required');
  return orDegraded(deps, () => deleteInventoryItem(deps, wallet, id), () => ({
    operation: { kind: 'inventory-delete', wallet, id },
    data: { ok: true as const, id },
  }));
};

export const createReceiptOrAccept = (deps: AppDeps, caller: { wallet: string; subscriptionId: string | null }, request: ReceiptCreateRequest) =>
  orDegraded(deps, () => createReceipt(deps, caller, request), () => ({
    operation: { kind: 'receipt-create', wallet: caller.wallet, subscriptionId: caller.subscriptionId, input: request },
    data: { id: request.id, paymentUrl: paymentUrlFor(deps.settings.baseUrl, request.id), status: 'pending' as const },
  }));

/** While degraded the current status is unknown: the answer shows the requested one, with nothing else known. */
export const reportStatusOrAccept = (deps: AppDeps, wallet: string, input: { id: string; status: string; failureCode?: string }) => {
  if (!(receiptStatuses as readonly string[]).includes(input.status)) {
    throw new DomainError('invalid_input', `status: must be one of ${receiptStatuses.join(', ')}`, { field: 'status' });
  }
  return orDegraded(deps, () => reportReceiptStatus(deps, wallet, input), (acceptedAt) => ({
    operation: { kind: 'receipt-status', wallet, input },
    data: {
      ok: true as const,
      receiptId: input.id,
      status: input.status as (typeof receiptStatuses)[number],
      previousStatus: null,
      updatedAt: acceptedAt,
      transactionHash: null,
      failureCode: input.failureCode ?? null,
      failureCategory: null,
      failureReason: null,
      failureAction: null,
      providerErrorCode: null,
      providerRequestId: null,
    },
  }));
};
