/**
 * The one list of every Cosmos container (with its partition key) and every Storage queue the service
 * uses. Store creation, the local stack's persistence and the infrastructure checks all read it.
 */
export interface ContainerSpec {
  name: string;
  partitionKey: string;
  uniqueKeys?: string[][];
  /** Composite indexes (path, order) that the container's multi-field ORDER BY queries need. */
  compositeIndexes?: Array<Array<{ path: string; order: 'ascending' | 'descending' }>>;
  /** Holds temporary documents (with `expiresAt`): the container has TTL on, per document. */
  expiring?: true;
}

const sortedWithIdTieBreak = (fields: string[]) =>
  fields.flatMap((field) =>
    (['ascending', 'descending'] as const).map((order) => [
      { path: `/${field}`, order },
      { path: '/id', order },
    ]),
  );

export const containers = {
  inventory: {
    name: 'inventory',
    partitionKey: '/wallet',
    uniqueKeys: [['/sku']],
    compositeIndexes: sortedWithIdTieBreak(['name', 'sku', 'priceUsd', 'stockQty', 'updatedAt']),
  },
  subscriptions: { name: 'subscriptions', partitionKey: '/id' },
  /** Create-only documents that make a value unique across partitions and name its owner. */
  claims: { name: 'claims', partitionKey: '/id', expiring: true },
  /** One document per merchant wallet: shop configuration and split. */
  merchants: { name: 'merchants', partitionKey: '/wallet' },
  /** Receipts by merchant wallet (a merchant's listing is a single-partition query); ids are claimed. */
  receipts: {
    name: 'receipts',
    partitionKey: '/wallet',
    compositeIndexes: [
      [{ path: '/createdAt', order: 'descending' }, { path: '/id', order: 'descending' }],
      [{ path: '/wallet', order: 'ascending' }, { path: '/createdAt', order: 'descending' }],
    ],
  },
  /** Webhook delivery attempts by receipt; an attempt's id `<eventId>:<n>` is claimed before it is sent. */
  deliveries: { name: 'deliveries', partitionKey: '/receiptId' },
  /** Platform-wide records: pricing per brand. */
  platform: { name: 'platform', partitionKey: '/id' },
  /** What the payment watcher keeps per chain: its block cursor and the splits it watches. */
  chainState: { name: 'chain-state', partitionKey: '/id' },
  /** Admin sign-in sessions; logout revokes one. */
  sessions: { name: 'sessions', partitionKey: '/id', expiring: true },
} as const satisfies Record<string, ContainerSpec>;

export const queues = {
  webhooks: 'webhooks',
  outbox: 'outbox',
  outboxRejected: 'outbox-rejected',
} as const;

export const allContainers: ContainerSpec[] = Object.values(containers);
export const allQueues: string[] = Object.values(queues);
