import { describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import { applyOutboxEntry, orDegraded, type OutboxEntry } from '../../shared/app/outbox';
import { memoryDeps } from '../../shared/composition';
import { deleteInventoryItem } from '../../shared/app/inventory-delete';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { createReceipt, reportReceiptStatus } from '../../shared/app/receipts';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { StoreUnavailableError } from '../../shared/ports/errors';
import { wallets } from '../support/stores';

const down = async (): Promise<never> => {
  throw new StoreUnavailableError();
};

describe('the outbox', () => {
  it('answers 503 (the store error) for a write too large for a queue message, and queues the rest', async () => {
    const deps = memoryDeps();
    const big = InventoryUpsertInput.parse({ id: 'itm_1', sku: 'A', name: 'A', priceUsd: 1, description: 'x'.repeat(2000) });
    const huge = { kind: 'inventory-upsert' as const, wallet: wallets.alice, input: { ...big, id: 'itm_1', tags: Array.from({ length: 50 }, (_, n) => `${n}`.padEnd(50, 'y')).concat(['z'.repeat(47_000)]) } };
    await expect(orDegraded(deps, down, () => ({ operation: huge, data: {} }))).rejects.toBeInstanceOf(StoreUnavailableError);
    const small = await orDegraded(deps, down, () => ({ operation: { kind: 'inventory-delete', wallet: wallets.alice, id: 'itm_1' }, data: { ok: true, id: 'itm_1' } }));
    expect(small).toEqual({ ok: true, degraded: true, reason: 'store_unavailable', data: { ok: true, id: 'itm_1' } });
    const [queued] = (deps.queue as MemoryEventQueue).take('outbox');
    expect(queued!.message).toMatchObject({ seq: expect.any(Number), documentKey: `inventory:${wallets.alice}:itm_1`, operation: { kind: 'inventory-delete' } });
  });

  it('applies writes to one item in acceptance order: an older one arriving late is superseded', async () => {
    const deps = memoryDeps();
    const entry = (seq: number, name: string): OutboxEntry => ({
      outboxId: `o-${seq}`,
      seq,
      documentKey: `inventory:${wallets.alice}:itm_x`,
      acceptedAt: 1,
      operation: { kind: 'inventory-upsert', wallet: wallets.alice, input: { ...InventoryUpsertInput.parse({ sku: 'X', name, priceUsd: 1 }), id: 'itm_x' } },
    });
    expect(await applyOutboxEntry(deps, entry(2, 'newer'))).toBe('applied');
    expect(await applyOutboxEntry(deps, entry(1, 'older'))).toBe('superseded');
    expect((await deps.inventory.get(wallets.alice, 'itm_x'))?.value.name).toBe('newer');
    expect((deps.queue as MemoryEventQueue).take('outbox-rejected')).toEqual([expect.objectContaining({ message: expect.objectContaining({ reason: expect.stringContaining('superseded') }) })]);
  });

  it('applies a retried entry (same sequence) instead of calling it superseded', async () => {
    const deps = memoryDeps();
    const entry: OutboxEntry = {
      outboxId: 'o-1',
      seq: 5,
      documentKey: `inventory:${wallets.alice}:itm_y`,
      acceptedAt: 1,
      operation: { kind: 'inventory-upsert', wallet: wallets.alice, input: { ...InventoryUpsertInput.parse({ sku: 'Y', name: 'first try', priceUsd: 1 }), id: 'itm_y' } },
    };
    const failing = { ...deps, inventory: { ...deps.inventory, get: down } } as typeof deps;
    expect(await applyOutboxEntry(failing, entry)).toBe('waiting');
    expect(await applyOutboxEntry(deps, entry)).toBe('applied');
    expect((await deps.inventory.get(wallets.alice, 'itm_y'))?.value.name).toBe('first try');
  });

  it('keeps an entry waiting (requeued with a delay, never poisoned) while the store is still down', async () => {
    const deps = memoryDeps();
    const failing = { ...deps, receipts: { ...deps.receipts, get: down } } as typeof deps;
    const entry: OutboxEntry = { outboxId: 'o', seq: 1, documentKey: 'receipt:x', acceptedAt: 1, operation: { kind: 'receipt-status', wallet: wallets.alice, input: { id: 'r', status: 'link_opened' } } };
    expect(await applyOutboxEntry(failing, entry)).toBe('waiting');
    expect((deps.queue as MemoryEventQueue).take('outbox')).toEqual([{ queue: 'outbox', message: entry, delaySeconds: 10 }]);
  });
});

describe('an outbox entry never overwrites newer data', () => {
  const T0 = Date.parse('2026-11-23T10:00:00Z');
  const at = (ms: number) => ({ now: () => ms });
  const upsertEntry = (acceptedAt: number, fields: { id: string; sku: string; name: string; priceUsd: number }, seq = acceptedAt * 1000): OutboxEntry => ({
    outboxId: `o-${seq}`,
    seq,
    documentKey: `inventory:${wallets.alice}:${fields.id}`,
    acceptedAt,
    operation: { kind: 'inventory-upsert', wallet: wallets.alice, input: { ...InventoryUpsertInput.parse(fields), id: fields.id } },
  });

  it('skips an upsert accepted while the store was down when a direct write after recovery is newer (the newer price stays)', async () => {
    const deps = memoryDeps({ clock: at(T0) });
    await upsertInventoryItem(deps, wallets.alice, InventoryUpsertInput.parse({ sku: 'MUG', name: 'Mug', priceUsd: 10 }), 'itm_mug');
    // Accepted at T0 + 1 s while the store was down: price 12.
    const late = upsertEntry(T0 + 1_000, { id: 'itm_mug', sku: 'MUG', name: 'Mug', priceUsd: 12 });
    // Store back; a direct write at T0 + 5 s sets 15.
    await upsertInventoryItem({ ...deps, clock: at(T0 + 5_000) }, wallets.alice, InventoryUpsertInput.parse({ id: 'itm_mug', sku: 'MUG', name: 'Mug', priceUsd: 15 }));
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 6_000) }, late)).toBe('superseded');
    expect((await deps.inventory.get(wallets.alice, 'itm_mug'))?.value).toMatchObject({ priceUsd: 15, updatedAt: T0 + 5_000 });
  });

  it('applies an upsert that is newer than the stored item, stamped with its acceptance time', async () => {
    const deps = memoryDeps({ clock: at(T0) });
    await upsertInventoryItem(deps, wallets.alice, InventoryUpsertInput.parse({ sku: 'MUG', name: 'Mug', priceUsd: 10 }), 'itm_mug');
    const entry = upsertEntry(T0 + 1_000, { id: 'itm_mug', sku: 'MUG', name: 'Mug', priceUsd: 12 });
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 9_000) }, entry)).toBe('applied');
    expect((await deps.inventory.get(wallets.alice, 'itm_mug'))?.value).toMatchObject({ priceUsd: 12, updatedAt: T0 + 1_000 });
  });

  it('does not bring back an item deleted after the entry was accepted (a tombstone by id and by sku)', async () => {
    const deps = memoryDeps({ clock: at(T0) });
    await upsertInventoryItem(deps, wallets.alice, InventoryUpsertInput.parse({ sku: 'MUG', name: 'Mug', priceUsd: 10 }), 'itm_mug');
    const byId = upsertEntry(T0 + 1_000, { id: 'itm_mug', sku: 'MUG', name: 'Mug', priceUsd: 12 });
    // Accepted without an id (a new id was answered), for the same sku.
    const bySku = upsertEntry(T0 + 2_000, { id: 'itm_new', sku: 'MUG', name: 'Mug', priceUsd: 13 });
    await deleteInventoryItem({ ...deps, clock: at(T0 + 5_000) }, wallets.alice, 'itm_mug');
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 6_000) }, byId)).toBe('superseded');
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 6_000) }, bySku)).toBe('superseded');
    expect(await deps.inventory.get(wallets.alice, 'itm_mug')).toBeUndefined();
    expect(await deps.inventory.findBySku(wallets.alice, 'MUG')).toBeUndefined();
    // A write accepted after the delete still creates the item.
    const after = upsertEntry(T0 + 7_000, { id: 'itm_again', sku: 'MUG', name: 'Mug', priceUsd: 14 });
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 8_000) }, after)).toBe('applied');
    expect((await deps.inventory.findBySku(wallets.alice, 'MUG'))?.value).toMatchObject({ id: 'itm_again', priceUsd: 14 });
  });

  it('does not delete an item rewritten after the delete was accepted', async () => {
    const deps = memoryDeps({ clock: at(T0) });
    await upsertInventoryItem(deps, wallets.alice, InventoryUpsertInput.parse({ sku: 'MUG', name: 'Mug', priceUsd: 10 }), 'itm_mug');
    const lateDelete: OutboxEntry = { outboxId: 'd', seq: 1, documentKey: `inventory:${wallets.alice}:itm_mug`, acceptedAt: T0 + 1_000, operation: { kind: 'inventory-delete', wallet: wallets.alice, id: 'itm_mug' } };
    await upsertInventoryItem({ ...deps, clock: at(T0 + 5_000) }, wallets.alice, InventoryUpsertInput.parse({ id: 'itm_mug', sku: 'MUG', name: 'Mug', priceUsd: 15 }));
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 6_000) }, lateDelete)).toBe('superseded');
    expect((await deps.inventory.get(wallets.alice, 'itm_mug'))?.value.priceUsd).toBe(15);
  });

  it('does not move a receipt with a late session failure accepted before later progress', async () => {
    const deps = memoryDeps({ clock: at(T0) });
    await createReceipt(deps, { wallet: wallets.alice, subscriptionId: null }, { id: 'r-1', lineItems: [{ label: 'Tea', priceUsd: 2 }], totalUsd: 2 });
    const lateFailure: OutboxEntry = {
      outboxId: 'f',
      seq: 1,
      documentKey: `receipt:${wallets.alice}:r-1`,
      acceptedAt: T0 + 1_000,
      operation: { kind: 'receipt-status', wallet: wallets.alice, input: { id: 'r-1', status: 'failed', failureCode: 'PORTAL_SESSION_EXPIRED' } },
    };
    await reportReceiptStatus({ ...deps, clock: at(T0 + 5_000) }, wallets.alice, { id: 'r-1', status: 'checkout_success' });
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 6_000) }, lateFailure)).toBe('superseded');
    expect((await deps.receipts.get(wallets.alice, 'r-1'))?.value.status).toBe('checkout_success');
    // A report accepted after the last change still applies.
    const timely: OutboxEntry = { ...lateFailure, outboxId: 'g', seq: 2, acceptedAt: T0 + 7_000 };
    expect(await applyOutboxEntry({ ...deps, clock: at(T0 + 8_000) }, timely)).toBe('applied');
    expect((await deps.receipts.get(wallets.alice, 'r-1'))?.value.status).toBe('failed');
  });
});
