import type { AppDeps } from './deps';

/**
 * Nothing older overwrites anything newer. Every write records when it was accepted (an item's
 * `updatedAt`, a receipt's `updatedAt`); a write accepted earlier than that — an outbox entry applied
 * after the store came back — is superseded instead of applied. A delete leaves tombstones (by id and
 * by sku) so a late write cannot bring the item back.
 */
export class SupersededWrite extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SupersededWrite';
  }
}

/** Outbox entries wait at most as long as a queue message lives (7 days); a tombstone outlives them. */
export const TOMBSTONE_TTL_MS = 8 * 24 * 60 * 60 * 1000;

const tombstoneIds = (wallet: string, item: { id?: string; sku?: string }) => [
  ...(item.id ? [`inventory-deleted:${wallet}:id:${item.id}`] : []),
  ...(item.sku ? [`inventory-deleted:${wallet}:sku:${item.sku}`] : []),
];

/** Records that an item (this id, this sku) was deleted at `deletedAt`; a later deletion time wins. */
export const recordTombstones = async (deps: Pick<AppDeps, 'claims'>, wallet: string, item: { id: string; sku: string }, deletedAt: number) => {
  for (const id of tombstoneIds(wallet, item)) {
    const stored = await deps.claims.get(id, id);
    if (stored && stored.value.createdAt >= deletedAt) continue;
    await deps.claims.upsert(id, { id, owner: wallet, createdAt: deletedAt, expiresAt: deletedAt + TOMBSTONE_TTL_MS });
  }
};

/** Throws SupersededWrite when the item (by id or sku) was deleted after `acceptedAt`. */
export const refuseIfDeletedSince = async (deps: Pick<AppDeps, 'claims'>, wallet: string, item: { id?: string; sku?: string }, acceptedAt: number) => {
  for (const id of tombstoneIds(wallet, item)) {
    const stored = await deps.claims.get(id, id);
    if (stored && stored.value.createdAt > acceptedAt) throw new SupersededWrite(`the item was deleted after this write was accepted (${id})`);
  }
};

/** Throws SupersededWrite when the document was last written after `acceptedAt`. */
export const refuseIfNewer = (lastWrittenAt: number, acceptedAt: number | undefined, what: string) => {
  if (acceptedAt !== undefined && lastWrittenAt > acceptedAt) throw new SupersededWrite(`${what} changed after this write was accepted`);
};
