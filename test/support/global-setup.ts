import type { TestProject } from 'vitest/node';
import { LOCAL_COSMOS_KEY, startCosmosServer, startQueueServer } from '../../scripts/local/servers';
import { ANVIL_RELAYER, startAnvil } from '../../scripts/local/anvil';
import { deployLocalContracts } from '../../scripts/local/deploy-contracts';

declare module 'vitest' {
  export interface ProvidedContext {
    cosmosEndpoint: string;
    cosmosKey: string;
    queueConnectionString: string;
    /**
     * The run's anvil chain with the local contracts deployed by `relayerKey` (anvil account 0) and the
     * ETH/USD feed by anvil account 4 (its owner, which also funded the buyers, accounts 5–9).
     * Test files run in parallel: one that sends transactions should do so from an anvil account of
     * its own (ANVIL_ACCOUNTS), since two workers counting nonces for one account collide.
     */
    chain: { rpcUrl: string; chainId: number; relayerKey: string; usdc: string; usdt: string; splitFactory: string; ethUsdFeed: string; depositFactory: string };
  }
}

/** One Cosmos protocol server, one Azurite queue service and one anvil chain for the whole run, on free loopback ports. */
export default async function setup(project: TestProject) {
  const [cosmos, queue, anvil] = await Promise.all([startCosmosServer(), startQueueServer(), startAnvil({ idleBlockSeconds: 1 })]);
  project.provide('cosmosEndpoint', cosmos.url);
  project.provide('cosmosKey', LOCAL_COSMOS_KEY);
  project.provide('queueConnectionString', queue.connectionString);
  const close = async () => {
    await Promise.all([cosmos.close(), queue.close(), anvil.close()]);
  };
  try {
    const contracts = await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
    project.provide('chain', { rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, relayerKey: ANVIL_RELAYER.privateKey, ...contracts });
  } catch (error) {
    await close();
    throw error;
  }
  return close;
}
