/**
 * Saves the Cosmos protocol server's documents (which live in memory) to one JSON file and restores
 * them at start, so the local stack keeps keys, inventory and receipts across restarts.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CosmosStore } from '../../shared/adapters/cosmos/client';
import { ensureCosmosContainers } from '../../shared/adapters/cosmos/client';
import { allContainers } from '../../shared/registry';

interface Snapshot {
  savedAt: number;
  containers: Record<string, Record<string, unknown>[]>;
}

const SYSTEM_FIELDS = ['_rid', '_self', '_etag', '_attachments', '_ts'];

export const saveStore = async (store: CosmosStore, file: string): Promise<number> => {
  const snapshot: Snapshot = { savedAt: Date.now(), containers: {} };
  let count = 0;
  for (const spec of allContainers) {
    const { resources } = await store.container(spec).items.readAll<Record<string, unknown>>().fetchAll();
    snapshot.containers[spec.name] = resources.map((document) => {
      const clean = { ...document };
      for (const field of SYSTEM_FIELDS) delete clean[field];
      return clean;
    });
    count += resources.length;
  }
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(snapshot));
  renameSync(temporary, file); // atomic: a crash mid-save never leaves half a file
  return count;
};

/** Creates the registered containers, then loads the saved documents into them. */
export const restoreStore = async (store: CosmosStore, file: string): Promise<number> => {
  await ensureCosmosContainers(store);
  if (!existsSync(file)) return 0;
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  let count = 0;
  for (const spec of allContainers) {
    const documents = snapshot.containers[spec.name] ?? [];
    const container = store.container(spec);
    for (let start = 0; start < documents.length; start += 50) {
      await Promise.all(documents.slice(start, start + 50).map((document) => container.items.upsert(document)));
    }
    count += documents.length;
  }
  return count;
};
