import { inject } from 'vitest';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';

/**
 * The run's anvil chain through the real adapter. Test files run in parallel and each sending file
 * needs an account of its own as relayer (nonces are counted per process): pass its index, or the
 * private key of a fresh funded wallet (`testAccounts`), which no other file can know.
 */
export const chainForTests = (relayer: number | string = 5): EvmChain => {
  const chain = inject('chain');
  return new EvmChain({
    rpcUrl: chain.rpcUrl,
    chainId: chain.chainId,
    relayerPrivateKey: typeof relayer === 'string' ? relayer : ANVIL_ACCOUNTS[relayer]!.privateKey,
    splitFactory: chain.splitFactory,
    tokens: [chain.usdc, chain.usdt],
    ethUsdFeed: chain.ethUsdFeed,
    depositFactory: chain.depositFactory,
  });
};
