/**
 * The embedded stand-ins for Azure services, on loopback and free ports: the Cosmos protocol server
 * and Azurite's queue service. Used by `npm start`, the keys CLI and the test setup.
 */
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import type { Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpServer } from '@vercel/cosmosdb-server';

const LOOPBACK = '127.0.0.1';

/** The well-known Azurite development account (public, documented by Microsoft; not a secret). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
/** The Cosmos protocol server accepts any key. */
export const LOCAL_COSMOS_KEY = 'local-cosmos-protocol-server';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

const listen = (server: NetServer | Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => resolve((server.address() as AddressInfo).port));
  });

export const freePort = async (): Promise<number> => {
  const probe = createNetServer();
  const port = await listen(probe, 0);
  await new Promise((resolve) => probe.close(resolve));
  return port;
};

export interface CosmosServer extends RunningServer {
  /** True once a write reached the server since the last call; lets persistence skip idle saves. */
  takeDirty(): boolean;
}

/** A write is anything but a read or a query (queries are POSTs flagged by a header). */
const isWrite = (method = 'GET', headers: Record<string, string | string[] | undefined>) =>
  method !== 'GET' && method !== 'HEAD' && !(method === 'POST' && headers['x-ms-documentdb-isquery']);

export const startCosmosServer = async (port = 0): Promise<CosmosServer> => {
  const server = createHttpServer({ keepAlive: true } as object) as Server;
  let dirty = false;
  server.prependListener('request', (request) => {
    if (isWrite(request.method, request.headers)) dirty = true;
  });
  const actual = await listen(server, port);
  return {
    url: `http://${LOOPBACK}:${actual}`,
    takeDirty: () => {
      const was = dirty;
      dirty = false;
      return was;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

interface AzuriteConstants {
  DEFAULT_QUEUE_PERSISTENCE_PATH: string;
  DEFAULT_QUEUE_LOKI_DB_PATH: string;
  DEFAULT_QUEUE_EXTENT_LOKI_DB_PATH: string;
  DEFAULT_QUEUE_KEEP_ALIVE_TIMEOUT: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Constructor = new (...args: any[]) => any;

/** A CommonJS module's `default` export, however the loader wrapped it. */
const cjsDefault = (module: unknown): Constructor => {
  const outer = (module as { default?: { default?: Constructor } & Constructor }).default;
  return (outer?.default ?? outer) as Constructor;
};

export interface QueueServer extends RunningServer {
  connectionString: string;
}

/** Azurite's queue service in this process: in memory, or persisted under `location`. */
export const startQueueServer = async (options: { port?: number; location?: string } = {}): Promise<QueueServer> => {
  const port = options.port || (await freePort());
  // Azurite's package entry is its editor extension; the queue server is loaded from its dist files.
  const QueueConfiguration = cjsDefault(await import('azurite/dist/src/queue/QueueConfiguration.js'));
  const QueueServer = cjsDefault(await import('azurite/dist/src/queue/QueueServer.js'));
  const constants = (await import('azurite/dist/src/queue/utils/constants.js')) as unknown as AzuriteConstants;
  const location = options.location;
  if (location) mkdirSync(location, { recursive: true });
  const at = (file: string) => (location ? join(location, file) : file);
  const persistence = [{ locationId: 'Default', locationPath: at(constants.DEFAULT_QUEUE_PERSISTENCE_PATH), maxConcurrency: 10 }];
  const config = new QueueConfiguration(
    LOOPBACK,
    port,
    constants.DEFAULT_QUEUE_KEEP_ALIVE_TIMEOUT,
    at(constants.DEFAULT_QUEUE_LOKI_DB_PATH),
    at(constants.DEFAULT_QUEUE_EXTENT_LOKI_DB_PATH),
    persistence,
    false, // access log
    undefined,
    false, // debug log
    undefined,
    false, // loose
    true, // skipApiVersionCheck: the current SDK sends an API version Azurite would reject
    '',
    '',
    '',
    undefined,
    false,
    !location, // in-memory persistence when no location is given
  );
  const server = new QueueServer(config);
  await server.start();
  const url = `http://${LOOPBACK}:${port}/${AZURITE_ACCOUNT}`;
  return {
    url,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};QueueEndpoint=${url};`,
    close: () => server.close(),
  };
};
