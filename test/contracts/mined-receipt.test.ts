import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_RELAYER, startAnvil, type RunningAnvil } from '../../scripts/local/anvil';
import { deployLocalContracts, type LocalContracts } from '../../scripts/local/deploy-contracts';
import { EvmChain } from '../../shared/adapters/evm/chain';

/**
 * The relayer's transactions are followed until mined by asking for their receipt, not by waiting for
 * the next block: on a chain of its own that mines only when sent to (automine, no other sender), a
 * node that answers a just-mined receipt as missing for a while (anvil now and then, a node behind a load
 * balancer) must not leave a split deployment or a distribution waiting for a block that never comes.
 */
let anvil: RunningAnvil;
let contracts: LocalContracts;

beforeAll(async () => {
  anvil = await startAnvil();
  contracts = await deployLocalContracts(anvil.rpcUrl, ANVIL_RELAYER.privateKey);
}, 60_000);
afterAll(async () => {
  await anvil?.close();
});

describe('a receipt the node misses for a while', () => {
  it('still ends the relayer’s wait: a split is deployed and distributed', async () => {
    const chain = new EvmChain({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, relayerPrivateKey: ANVIL_RELAYER.privateKey, splitFactory: contracts.splitFactory, tokens: [contracts.usdc] });
    try {
      // The node misses each receipt the first three times it is asked for it (until the next block, in effect: none comes).
      const asked = new Map<string, number>();
      const real = chain.provider.getTransactionReceipt.bind(chain.provider);
      chain.provider.getTransactionReceipt = async (hash) => {
        const key = String(hash);
        asked.set(key, (asked.get(key) ?? 0) + 1);
        return asked.get(key)! <= 3 ? null : real(hash);
      };
      const payees = [
        { address: Wallet.createRandom().address.toLowerCase(), bps: 9_900 },
        { address: Wallet.createRandom().address.toLowerCase(), bps: 100 },
      ];
      const deployed = await chain.deploySplit(payees);
      expect(deployed).toMatchObject({ created: true });
      const distributed = await chain.distribute(deployed.address, contracts.usdc);
      expect(distributed.blockNumber).toBeGreaterThan(deployed.blockNumber);
    } finally {
      chain.destroy();
    }
  }, 20_000);
});
