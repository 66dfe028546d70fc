/**
 * The merchant's wallet in the console: found as the portal finds a buyer's (EIP-6963, else
 * `window.ethereum`), used through EIP-1193 calls only. Transactions (deploying the split,
 * distributing it) are sent from the signed-in wallet and followed until they are mined.
 */
import { classifyWalletError } from '../../portal/wallet-calls';
import { discoverWallets, type Eip1193Provider, type Wallet } from '../../portal/wallets';
import { toQuantity } from '../eth';

export type { Wallet };

/** The wallets in this browser, once discovery settled. */
export const findWallets = (): Promise<Wallet[]> =>
  new Promise((resolve) => {
    const found: Wallet[] = [];
    discoverWallets((wallet) => found.push(wallet), () => resolve(found));
  });

const LAST_WALLET = 'admin-wallet';

/** Remembers which wallet signed in, so later transactions ask the same one. */
export const rememberWallet = (wallet: Wallet) => sessionStorage.setItem(LAST_WALLET, wallet.info.rdns || wallet.info.uuid);

export class WalletProblem extends Error {}

/** What a wallet's refusal means, in the merchant's words. */
export const walletMessage = (error: unknown): string => {
  if (error instanceof WalletProblem) return error.message;
  const code = classifyWalletError(error);
  if (code === 'PORTAL_CHAIN_USER_REJECTED') return 'You cancelled the request in your wallet. Nothing was sent.';
  if (code === 'PORTAL_CHAIN_INSUFFICIENT_BALANCE') return 'Your wallet does not hold enough ETH for the network fee.';
  const message = (error as { message?: unknown } | null)?.message;
  return `Your wallet could not do it${typeof message === 'string' && message ? `: ${message.slice(0, 200)}` : '.'}`;
};

/**
 * The signed-in wallet, connected: the one used to sign in (or the only one), holding the account
 * the session is for, on the deployment's chain (asked to switch when it is not).
 */
export const connectSignedIn = async (account: string, chainId: number): Promise<{ wallet: Wallet; provider: Eip1193Provider; account: string }> => {
  const wallets = await findWallets();
  if (wallets.length === 0) throw new WalletProblem('No browser wallet was found. Open the console in the browser that has your wallet.');
  const remembered = sessionStorage.getItem(LAST_WALLET);
  const wallet = wallets.find((candidate) => (candidate.info.rdns || candidate.info.uuid) === remembered) ?? wallets[0]!;
  const accounts = (await wallet.provider.request({ method: 'eth_requestAccounts' })) as string[];
  const match = accounts.find((candidate) => candidate.toLowerCase() === account.toLowerCase());
  if (!match) throw new WalletProblem(`Switch your wallet to the account you signed in with (${account.slice(0, 6)}…${account.slice(-4)}) and try again.`);
  const current = Number(await wallet.provider.request({ method: 'eth_chainId' }));
  if (current !== chainId) {
    try {
      await wallet.provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: toQuantity(chainId) }] });
    } catch (error) {
      if (classifyWalletError(error) === 'PORTAL_CHAIN_USER_REJECTED') throw error;
    }
    if (Number(await wallet.provider.request({ method: 'eth_chainId' })) !== chainId) throw new WalletProblem(`Switch your wallet to the network with chain id ${chainId} and try again.`);
  }
  return { wallet, provider: wallet.provider, account: match };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface MinedReceipt {
  status: string;
  blockNumber: string;
  transactionHash: string;
}

/** Follows a sent transaction until it is mined (checked every second), for up to `ms`. */
export const waitForReceipt = async (provider: Eip1193Provider, hash: string, ms = 180_000): Promise<MinedReceipt> => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const receipt = (await provider.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as MinedReceipt | null;
    if (receipt?.blockNumber) {
      if (receipt.status !== '0x1') throw new WalletProblem('The network did not accept the transaction (it reverted). Nothing changed.');
      return receipt;
    }
    await sleep(1_000);
  }
  throw new WalletProblem('The transaction was not mined in time. It may still go through: reload this page in a few minutes.');
};
