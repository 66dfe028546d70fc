import type { Container, CosmosClient, CosmosClientOptions, Database, PluginConfig } from '@azure/cosmos';
import { lazyAzureCredential } from '../azure/credential';
import { CircuitBreaker, CircuitOpenError } from './circuit';
import { allContainers, type ContainerSpec } from '../../registry';
import { DuplicateKeyError, EtagMismatchError, StoreThrottledError, StoreUnavailableError } from '../../ports/errors';
import type { HealthProbe } from '../../ports/runtime';

export interface CosmosSettings {
  endpoint: string;
  /** Without a key the client signs in with its managed identity (Azure, local auth disabled). */
  key?: string;
  database: string;
  /** Per-request timeout; past it the call fails as "store unavailable". */
  requestTimeoutMs: number;
}

export interface CosmosStore {
  client: CosmosClient;
  database: Database;
  container(spec: ContainerSpec): Container;
  probe: HealthProbe;
  dispose(): void;
}

/**
 * Every SDK operation passes the circuit breaker: an open circuit fails it at once, and each outcome
 * (a store that cannot be reached or answers 503/timeout, or anything else) is counted.
 */
const breakerPlugin = (breaker: CircuitBreaker): PluginConfig => ({
  on: 'operation',
  plugin: async (context, diagnosticNode, next) => {
    if (!breaker.allow()) throw new CircuitOpenError();
    try {
      const response = await next(context);
      breaker.success();
      return response;
    } catch (error) {
      if (translateCosmosError(error) instanceof StoreUnavailableError) breaker.failure();
      else breaker.success();
      throw error;
    }
  },
});

/** The SDK, loaded when the first store connects rather than with the app (a cold start need not read it). */
const cosmosSdk = (): typeof import('@azure/cosmos') => require('@azure/cosmos');

export const connectCosmos = (settings: CosmosSettings): CosmosStore => {
  const { CosmosClient } = cosmosSdk();
  const breaker = new CircuitBreaker();
  const options: CosmosClientOptions & { plugins: PluginConfig[] } = {
    endpoint: settings.endpoint,
    ...(settings.key ? { key: settings.key } : { aadCredentials: lazyAzureCredential() }),
    // The SDK would otherwise follow the account's advertised (https) locations.
    connectionPolicy: {
      enableEndpointDiscovery: false,
      requestTimeout: settings.requestTimeoutMs,
      // Throttling (429) is retried by the SDK, within bounds a request can wait; past them the call answers 503 with Retry-After.
      retryOptions: { maxRetryAttemptCount: 5, maxWaitTimeInSeconds: 5 },
    },
    // Supported by the SDK though not in its typings: the one place every operation passes.
    plugins: [breakerPlugin(breaker)],
  };
  const client = new CosmosClient(options);
  const database = client.database(settings.database);
  const handles = new Map<string, Container>();
  return {
    client,
    database,
    container(spec) {
      let handle = handles.get(spec.name);
      if (!handle) handles.set(spec.name, (handle = database.container(spec.name)));
      return handle;
    },
    probe: {
      ping: async () => {
        try {
          await database.read();
        } catch (error) {
          throw translateCosmosError(error);
        }
      },
    },
    dispose: () => client.dispose(),
  };
};

/** Creates the database and every registered container when missing (local stack and tests only). */
export const ensureCosmosContainers = async (store: CosmosStore, specs: ContainerSpec[] = allContainers) => {
  await store.client.databases.createIfNotExists({ id: store.database.id });
  for (const spec of specs) {
    await store.database.containers.createIfNotExists({
      id: spec.name,
      partitionKey: { paths: [spec.partitionKey] },
      ...(spec.uniqueKeys && { uniqueKeyPolicy: { uniqueKeys: spec.uniqueKeys.map((paths) => ({ paths })) } }),
      ...(spec.compositeIndexes && { indexingPolicy: { compositeIndexes: spec.compositeIndexes } }),
      ...(spec.expiring && { defaultTtl: -1 }),
    });
  }
};

const statusOf = (error: unknown): number | string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? (error as { code: number | string }).code : undefined;

export const isNotFound = (error: unknown) => statusOf(error) === 404;

/** Maps SDK failures to the port's typed errors; anything unexpected is rethrown as it is. */
/** How long Cosmos asked a throttled caller to wait (ms); a second when it did not say. */
const retryAfterMsOf = (error: unknown): number => {
  const fields = error as { retryAfterInMs?: unknown; retryAfterInMilliseconds?: unknown; headers?: Record<string, unknown> };
  const candidates = [fields.retryAfterInMs, fields.retryAfterInMilliseconds, fields.headers?.['x-ms-retry-after-ms']];
  for (const value of candidates) {
    const ms = Number(value);
    if (value !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  }
  return 1_000;
};

export const translateCosmosError = (error: unknown): unknown => {
  const code = statusOf(error);
  if (code === 429) return new StoreThrottledError(retryAfterMsOf(error), { cause: error });
  if (code === 409) return new DuplicateKeyError();
  if (code === 412) return new EtagMismatchError();
  if (
    code === 408 ||
    code === 503 ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === 'ENOTFOUND' ||
    code === 'ECIRCUITOPEN' ||
    code === 'REQUEST_SEND_ERROR' ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
  ) {
    return new StoreUnavailableError(undefined, { cause: error });
  }
  return error;
};

/** Runs an SDK call and reports failures as the port's typed errors. */
export const cosmosCall = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    throw translateCosmosError(error);
  }
};

const SYSTEM_FIELDS = ['_rid', '_self', '_etag', '_attachments', '_ts', 'ttl'] as const;

/** A stored document without the store's own fields, and its ETag. */
export const fromDocument = <T>(document: Record<string, unknown>): { value: T; etag: string } => {
  const value: Record<string, unknown> = { ...document };
  for (const field of SYSTEM_FIELDS) delete value[field];
  return { value: value as T, etag: String(document._etag) };
};
