import { Contract, NonceManager, Wallet, parseEther, type JsonRpcProvider } from 'ethers';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import type { AppDeps } from '../../shared/app/deps';
import { newMerchant } from '../../shared/domain/merchant';
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
  const now = Date.now();
  await deps.merchants.upsert(merchant, {
    ...newMerchant(merchant, now),
    split: {
      address: split,
      recipients: [
        { address: merchant, bps: 9_900, role: 'merchant' },
        { address: platform, bps: 100, role: 'platform' },
      ],
      platformFeeBps: 100,
      partnerFeeBps: 0,
      txHash: deployed.txHash,
      chainId: chain.chainId,
      deployedAt: now,
    },
  });
  return { merchant, platform, split };
};
