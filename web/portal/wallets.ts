/**
 * Finding the browser's wallets, for every page that talks to one (the buyer's portal, the merchant
 * console): EIP-6963 announcements, else the older `window.ethereum`. EIP-1193 calls only: no
 * Ethereum library in the page's bundle.
 */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
  on?(event: string, listener: (...args: unknown[]) => void): void;
}

/** EIP-6963: what a wallet announces about itself. */
export interface WalletInfo {
  uuid: string;
  name: string;
  icon: string;
  rdns: string;
}

export interface Wallet {
  info: WalletInfo;
  provider: Eip1193Provider;
}

/** Wallets announce themselves within a few milliseconds; after this the list is shown as it is. */
export const DISCOVERY_MS = 400;

/**
 * Listens for EIP-6963 announcements (now and later) and asks the installed wallets to announce
 * themselves; after DISCOVERY_MS, `window.ethereum` stands in when none did, and `settled` runs.
 * Each wallet reaches `found` once.
 */
export const discoverWallets = (found: (wallet: Wallet) => void, settled: () => void): void => {
  const seen: Wallet[] = [];
  const add = (wallet: Wallet) => {
    if (seen.some((known) => known.info.uuid === wallet.info.uuid || known.provider === wallet.provider)) return;
    seen.push(wallet);
    found(wallet);
  };
  window.addEventListener('eip6963:announceProvider', (event) => {
    const detail = (event as CustomEvent<Wallet>).detail;
    if (detail?.info && typeof detail.provider?.request === 'function') {
      add({ info: { ...detail.info, name: String(detail.info.name || 'Wallet') }, provider: detail.provider });
    }
  });
  window.dispatchEvent(new Event('eip6963:requestProvider'));
  setTimeout(() => {
    const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
    if (seen.length === 0 && injected && typeof injected.request === 'function') {
      add({ info: { uuid: 'injected', name: 'browser wallet', icon: '', rdns: '' }, provider: injected });
    }
    settled();
  }, DISCOVERY_MS);
};
