import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { DomainError } from '../domain/errors';
import { InventoryUpsertInput } from '../domain/inventory';
import { ReceiptCreateRequest, ReceiptStatusUpdate } from '../domain/receipt-request';
import { queues } from '../registry';
import { StoreUnavailableError } from '../ports/errors';
import type { AppDeps } from './deps';
import { isEtagMismatchOrDuplicate, withEtagRetry } from './etag-retry';
import { deleteInventoryItem } from './inventory-delete';
import { upsertInventoryItem } from './inventory-upsert';
import { createReceipt, reportReceiptStatus } from './receipts';
import { SupersededWrite } from './write-order';

/** Writes accepted while the store was unreachable, in the durable `outbox` queue until it is back. */
export const OutboxOperation = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('inventory-upsert'), wallet: z.string(), input: InventoryUpsertInput.extend({ id: z.string() }) }),
  z.object({ kind: z.literal('inventory-delete'), wallet: z.string(), id: z.string() }),
  z.object({ kind: z.literal('receipt-create'), wallet: z.string(), subscriptionId: z.string().nullable(), input: ReceiptCreateRequest }),
  z.object({ kind: z.literal('receipt-status'), wallet: z.string(), input: ReceiptStatusUpdate }),
]);
export type OutboxOperation = z.infer<typeof OutboxOperation>;

export const OutboxEntry = z.object({
  outboxId: z.string(),
  /** Acceptance order: writes to one document apply in this order. */
  seq: z.number().int(),
  /** The document the write changes, e.g. `inventory:<wallet>:<id>`. */
  documentKey: z.string(),
  acceptedAt: z.number().int(),
  operation: OutboxOperation,
});
export type OutboxEntry = z.infer<typeof OutboxEntry>;

/** Queue messages are limited to 64 KiB of base64; a write must fit with room to spare. */
export const MAX_OUTBOX_BYTES = 48 * 1024;
/** While the store stays down, an entry waits this long before the next try (never poisoned). */
const RETRY_DELAY_S = 10;

let lastSeq = 0;
/** Monotonic in this process, and ordered by time across processes. */
const nextSeq = (now: number) => (lastSeq = Math.max(lastSeq + 1, now * 1000));

const documentKeyOf = (operation: OutboxOperation) => {
  switch (operation.kind) {
    case 'inventory-upsert':
      return `inventory:${operation.wallet}:${operation.input.id}`;
    case 'inventory-delete':
      return `inventory:${operation.wallet}:${operation.id}`;
    case 'receipt-create':
    case 'receipt-status':
      return `receipt:${operation.wallet}:${operation.input.id}`;
  }
};

export interface Degraded<T> {
  ok: true;
  degraded: true;
  reason: 'store_unavailable';
  data: T;
}

/**
 * Runs a write; if the store cannot be reached, accepts it into the outbox instead and answers
 * `{ok, degraded, reason, data}` with `data` the body the write would have answered. A write that
 * does not fit a queue message, or an outbox that cannot be reached either, answers 503.
 */
export const orDegraded = async <T>(
  deps: Pick<AppDeps, 'queue' | 'clock'>,
  write: () => Promise<T>,
  accept: (acceptedAt: number) => { operation: OutboxOperation; data: T },
): Promise<T | Degraded<T>> => {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    const acceptedAt = deps.clock.now();
    const { operation, data } = accept(acceptedAt);
    const entry: OutboxEntry = { outboxId: randomUUID(), seq: nextSeq(acceptedAt), documentKey: documentKeyOf(operation), acceptedAt, operation };
    if (Buffer.byteLength(JSON.stringify(entry)) > MAX_OUTBOX_BYTES) throw error;
    try {
      await deps.queue.send(queues.outbox, entry);
    } catch {
      throw error;
    }
    return { ok: true, degraded: true, reason: 'store_unavailable', data };
  }
};

const watermarkId = (documentKey: string) => `outbox-applied:${documentKey}`;

/**
 * Records the highest sequence applied to a document; false when a later one was applied already.
 * The same sequence again (a retry of this entry after a failed write) applies again.
 */
const advanceWatermark = (deps: Pick<AppDeps, 'claims'>, entry: OutboxEntry): Promise<boolean> => {
  const id = watermarkId(entry.documentKey);
  return withEtagRetry(
    async ({ write }) => {
      const stored = await deps.claims.get(id, id);
      const applied = stored ? Number(stored.value.owner) : 0;
      if (applied > entry.seq) return false;
      if (applied === entry.seq) return true;
      const claim = { id, owner: String(entry.seq), createdAt: entry.acceptedAt };
      await write(() => (stored ? deps.claims.replace(id, claim, stored.etag) : deps.claims.create(id, claim)));
      return true;
    },
    // Still clashing after every attempt: counted as superseded.
    { retryOn: isEtagMismatchOrDuplicate, exhausted: () => false },
  );
};

type ApplyDeps = Parameters<typeof upsertInventoryItem>[0] &
  Parameters<typeof createReceipt>[0] &
  Pick<AppDeps, 'inventory' | 'claims' | 'queue' | 'clock'>;

/**
 * The outbox applier (queue-triggered). Inventory writes replace whole items, so per document only
 * the latest accepted one counts: an older entry arriving after a newer one is superseded. Receipt
 * status changes go through the state machine, which orders them itself. A write that can no longer
 * apply goes to `outbox-rejected` with the reason; while the store is still down, the entry waits.
 */
export const applyOutboxEntry = async (deps: ApplyDeps, entry: OutboxEntry): Promise<'applied' | 'superseded' | 'rejected' | 'waiting'> => {
  const { operation } = entry;
  try {
    if (operation.kind === 'inventory-upsert' || operation.kind === 'inventory-delete') {
      if (!(await advanceWatermark(deps, entry))) {
        await deps.queue.send(queues.outboxRejected, { ...entry, reason: 'superseded by a later write to the same item' });
        return 'superseded';
      }
      if (operation.kind === 'inventory-upsert') await applyUpsert(deps, operation, entry.acceptedAt);
      else await deleteInventoryItem(deps, operation.wallet, operation.id, entry.acceptedAt);
    } else if (operation.kind === 'receipt-create') {
      // Stamped as of its acceptance, so reports accepted after it (and before the store came back) still apply.
      await createReceipt({ ...deps, clock: { now: () => entry.acceptedAt } }, { wallet: operation.wallet, subscriptionId: operation.subscriptionId }, operation.input);
    } else {
      await reportReceiptStatus(deps, operation.wallet, operation.input, entry.acceptedAt);
    }
    return 'applied';
  } catch (error) {
    if (error instanceof SupersededWrite) {
      await deps.queue.send(queues.outboxRejected, { ...entry, reason: `superseded: ${error.message}` });
      return 'superseded';
    }
    if (error instanceof StoreUnavailableError) {
      await deps.queue.send(queues.outbox, entry, { delaySeconds: RETRY_DELAY_S });
      return 'waiting';
    }
    if (error instanceof DomainError) {
      await deps.queue.send(queues.outboxRejected, { ...entry, reason: `${error.code}: ${error.message}` });
      return 'rejected';
    }
    throw error;
  }
};

/** An item accepted while the store was down keeps the id it was given, unless its sku already had one. */
const applyUpsert = async (deps: ApplyDeps, operation: Extract<OutboxOperation, { kind: 'inventory-upsert' }>, acceptedAt: number) => {
  const existing = (await deps.inventory.get(operation.wallet, operation.input.id)) ?? (await deps.inventory.findBySku(operation.wallet, operation.input.sku));
  if (existing) return upsertInventoryItem(deps, operation.wallet, { ...operation.input, id: existing.value.id }, undefined, acceptedAt);
  const { id: acceptedId, ...input } = operation.input;
  return upsertInventoryItem(deps, operation.wallet, input, acceptedId, acceptedAt);
};
