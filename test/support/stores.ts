import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { compose, memoryDeps } from '../../shared/composition';
import { loadConfig } from '../../shared/config';

export interface StoreFixture {
  name: 'memory' | 'cosmos';
  /** Fresh dependencies on an empty store (Cosmos: a database of its own). */
  make(overrides?: Partial<AppDeps>): Promise<AppDeps>;
}

export const memoryStore: StoreFixture = { name: 'memory', make: async (overrides) => memoryDeps(overrides) };

export const cosmosStore: StoreFixture = {
  name: 'cosmos',
  make: async (overrides = {}) => {
    const composition = compose(
      loadConfig({
        COSMOS_ENDPOINT: inject('cosmosEndpoint'),
        COSMOS_KEY: inject('cosmosKey'),
        COSMOS_DATABASE: `test-${randomUUID()}`,
        AzureWebJobsStorage: inject('queueConnectionString'),
        STORE_AUTO_CREATE: 'true',
        APP_ENV: 'development',
      }),
    );
    await composition.prepare();
    return { ...composition.deps, ...overrides };
  },
};

/** Every store adapter: contract suites run once per entry, so the adapters cannot drift. */
export const allStores: StoreFixture[] = [memoryStore, cosmosStore];

export const wallets = {
  alice: '0x' + 'a1'.repeat(20),
  bob: '0x' + 'b2'.repeat(20),
};
