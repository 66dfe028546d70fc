/**
 * The local chain's ETH/USD feed (MockAggregatorV3): read its answer, set a new one, make it stale.
 * Writes come from the feed's owner, anvil account 4; `npm run price` and the tests use these.
 */
import { Contract, Wallet, isError, parseUnits, type ContractTransactionResponse } from 'ethers';
import { mockAggregatorArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { formatUnits } from '../../shared/domain/payment';
import { ANVIL_FEED_OWNER } from './anvil';
import { fetchChainId } from './deploy-contracts';

export interface FeedAnswer {
  /** USD per ETH, in whole dollars ("3120.55"). */
  usd: string;
  answer: bigint;
  decimals: number;
  /** Unix seconds, as the feed reports it. */
  updatedAt: number;
}

const withFeed = async <T>(rpcUrl: string, feed: string, use: (contract: Contract) => Promise<T>): Promise<T> => {
  const provider = createProvider(rpcUrl, await fetchChainId(rpcUrl));
  try {
    return await use(new Contract(feed, mockAggregatorArtifact.abi, new Wallet(ANVIL_FEED_OWNER.privateKey, provider)));
  } finally {
    provider.destroy();
  }
};

/**
 * Sends a call as the owner and waits for it to be mined. Test files running in parallel may send from
 * the owner at the same moment: one of two transactions with the same nonce is refused, and sent again.
 */
const send = async (contract: Contract, method: string, ...args: unknown[]): Promise<string> => {
  for (let attempt = 1; ; attempt++) {
    try {
      const tx = (await contract.getFunction(method).send(...args)) as ContractTransactionResponse;
      await tx.wait();
      return tx.hash;
    } catch (error) {
      const nonceTaken = isError(error, 'NONCE_EXPIRED') || isError(error, 'REPLACEMENT_UNDERPRICED');
      if (!nonceTaken || attempt === 3) throw error;
    }
  }
};

export const readEthUsdPrice = (rpcUrl: string, feed: string): Promise<FeedAnswer> =>
  withFeed(rpcUrl, feed, async (contract) => {
    const [round, decimals] = await Promise.all([contract.getFunction('latestRoundData').staticCall(), contract.getFunction('decimals').staticCall()]);
    const answer = round[1] as bigint;
    return { usd: formatUnits(answer, Number(decimals)), answer, decimals: Number(decimals), updatedAt: Number(round[3]) };
  });

/** Starts a new round at `usd` per ETH (at most 8 decimals), updated now; answers the transaction hash. */
export const setEthUsdPrice = (rpcUrl: string, feed: string, usd: number | string): Promise<string> =>
  withFeed(rpcUrl, feed, async (contract) => {
    const decimals = Number(await contract.getFunction('decimals').staticCall());
    return send(contract, 'setAnswer', parseUnits(String(usd), decimals));
  });

/** Moves the latest answer's update time (Unix seconds): an old one makes the price stale. */
export const setFeedUpdatedAt = (rpcUrl: string, feed: string, updatedAt: number): Promise<string> =>
  withFeed(rpcUrl, feed, (contract) => send(contract, 'setUpdatedAt', updatedAt));
