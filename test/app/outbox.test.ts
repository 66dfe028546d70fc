import { describe, expect, it } from 'vitest';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import { applyOutboxEntry, orDegraded, type OutboxEntry } from '../../shared/app/outbox';
import { memoryDeps } from '../../shared/composition';
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
