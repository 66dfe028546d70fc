import { Contract, ContractFactory, NonceManager, Wallet, parseEther, type JsonRpcProvider } from 'ethers';
import { inject } from 'vitest';
import { mockAggregatorArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { EvmChain } from '../../shared/adapters/evm/chain';
import type { AppDeps, Settings } from '../../shared/app/deps';
import { newMerchant } from '../../shared/domain/merchant';
import { ZERO_ADDRESS } from '../../shared/domain/payment';
import type { Chain } from '../../shared/ports/chain';

/**
 * Accounts of a test file's own on the run's anvil chain: a funder (1,000 ETH, set by anvil) that
 * mints test tokens, and fresh wallets with gas and tokens, so no file races another's nonces.
 */
export const testAccounts = async (provider: JsonRpcProvider) => {
  const setEth = (address: string, ether: string) => provider.send('anvil_setBalance', [address, '0x' + parseEther(ether).toString(16)]);
  const key = Wallet.createRandom();
  await setEth(key.address, '1000');
  const funder = new NonceManager(new Wallet(key.privateKey, provider));
  return {
    funder,
    /** A fresh wallet with 100 ETH for gas and 10,000 of each of `tokens`. */
    newWallet: async (tokens: readonly string[] = []): Promise<Wallet> => {
      const wallet = new Wallet(Wallet.createRandom().privateKey, provider);
      await setEth(wallet.address, '100');
      for (const token of tokens) await (await new Contract(token, testUsdcArtifact.abi, funder).getFunction('mint')(wallet.address, 10_000_000_000n)).wait();
      return wallet;
    },
  };
};

/** A merchant's record with its split: the merchant 9,900 bps, `platform` 100 bps, as the brand's default pricing makes it. */
export const merchantRecordWithSplit = (merchant: string, split: { address: string; platform: string; txHash: string; chainId: number }, now = Date.now()) => ({
  ...newMerchant(merchant, now),
  split: {
    address: split.address,
    recipients: [
      { address: merchant, bps: 9_900, role: 'merchant' as const },
      { address: split.platform, bps: 100, role: 'platform' as const },
    ],
    platformFeeBps: 100,
    partnerFeeBps: 0,
    txHash: split.txHash,
    chainId: split.chainId,
    deployedAt: now,
  },
});

/**
 * A new merchant (random wallet) with its split deployed on chain by the relayer and recorded: the
 * merchant 9,900 bps, a random platform wallet 100 bps, as the brand's default pricing makes it.
 */
export const merchantWithSplit = async (deps: Pick<AppDeps, 'merchants'>, chain: Chain, merchant = Wallet.createRandom().address.toLowerCase()) => {
  const platform = Wallet.createRandom().address.toLowerCase();
  const deployed = await chain.deploySplit([
    { address: merchant, bps: 9_900 },
    { address: platform, bps: 100 },
  ]);
  const split = deployed.address.toLowerCase();
  await deps.merchants.upsert(merchant, merchantRecordWithSplit(merchant, { address: split, platform, txHash: deployed.txHash, chainId: chain.chainId }));
  return { merchant, platform, split };
};

/**
 * The run's anvil chain through the real adapter, with a test file's own relayer and ETH/USD feed
 * (at $3,000, owned by another fresh wallet), so the file can move the price and send without racing
 * another file's nonces. `fresh` makes a funded wallet.
 */
export const chainWithOwnFeed = async (fresh: () => Promise<Wallet>) => {
  const local = inject('chain');
  const [relayer, feedOwner] = [await fresh(), await fresh()];
  const feed = (await new ContractFactory(mockAggregatorArtifact.abi, mockAggregatorArtifact.bytecode, feedOwner).deploy(3000n * 10n ** 8n)) as Contract;
  await feed.waitForDeployment();
  const ethUsdFeed = (await feed.getAddress()).toLowerCase();
  const chain = new EvmChain({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: relayer.privateKey, splitFactory: local.splitFactory, tokens: [local.usdc, local.usdt], ethUsdFeed, depositFactory: local.depositFactory });
  return { chain, feed, ethUsdFeed };
};

/** Settings for paying on the run's chain: USDC, USDT and ETH (at `ethUsdFeed`), one confirmation. */
export const payingSettings = (settings: Settings, ethUsdFeed: string): Settings => {
  const local = inject('chain');
  return {
    ...settings,
    chainId: local.chainId,
    tokens: [
      { symbol: 'USDC', address: local.usdc, decimals: 6 },
      { symbol: 'USDT', address: local.usdt, decimals: 6 },
      { symbol: 'ETH', address: ZERO_ADDRESS, decimals: 18 },
    ],
    payments: { ...settings.payments, confirmations: 1, ethUsdFeed },
  };
};
