import type { TestProject } from 'vitest/node';
import { LOCAL_COSMOS_KEY, startCosmosServer, startQueueServer } from '../../scripts/local/servers';

declare module 'vitest' {
  export interface ProvidedContext {
    cosmosEndpoint: string;
    cosmosKey: string;
    queueConnectionString: string;
  }
}

/** One Cosmos protocol server and one Azurite queue service for the whole run, on free loopback ports. */
export default async function setup(project: TestProject) {
  const [cosmos, queue] = await Promise.all([startCosmosServer(), startQueueServer()]);
  project.provide('cosmosEndpoint', cosmos.url);
  project.provide('cosmosKey', LOCAL_COSMOS_KEY);
  project.provide('queueConnectionString', queue.connectionString);
  return async () => {
    await Promise.all([cosmos.close(), queue.close()]);
  };
}
