import { lazyAzureCredential } from '../azure/credential';
import type { QueueClient, QueueServiceClient } from '@azure/storage-queue';
import { allQueues, queues } from '../../registry';
import type { HealthProbe } from '../../ports/runtime';

export interface QueueStore {
  service: QueueServiceClient;
  queue(name: string): QueueClient;
  probe: HealthProbe;
}

const PROBE_TIMEOUT_MS = 2_000;

/** A connection string (local Azurite), or the queue endpoint reached with the app's managed identity (Azure). */
export type QueueConnection = { connectionString: string } | { queueServiceUri: string };

/** The SDK, loaded when the queues are first connected rather than with the app (a cold start need not read it). */
const queueSdk = (): typeof import('@azure/storage-queue') => require('@azure/storage-queue');

export const connectQueues = (connection: QueueConnection | string): QueueStore => {
  const { QueueServiceClient } = queueSdk();
  const options = { retryOptions: { maxTries: 2 } };
  const target = typeof connection === 'string' ? { connectionString: connection } : connection;
  const service =
    'connectionString' in target
      ? QueueServiceClient.fromConnectionString(target.connectionString, options)
      : new QueueServiceClient(target.queueServiceUri, lazyAzureCredential(), options);
  const handles = new Map<string, QueueClient>();
  const queue = (name: string) => {
    let handle = handles.get(name);
    if (!handle) handles.set(name, (handle = service.getQueueClient(name)));
    return handle;
  };
  return {
    service,
    queue,
    probe: {
      ping: async () => {
        await queue(queues.webhooks).getProperties({ abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      },
    },
  };
};

/** Creates every registered queue and its poison queue when missing (local stack and tests only). */
export const ensureQueues = async (store: QueueStore) => {
  for (const name of allQueues.flatMap((name) => [name, `${name}-poison`])) {
    await store.queue(name).createIfNotExists();
  }
};
