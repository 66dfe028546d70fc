/**
 * Pages in a real browser for the browser tests: headless Chromium from `@sparticuz/chromium`
 * driven by playwright-core, and a test wallet injected into each page: an EIP-1193 provider,
 * announced by EIP-6963 too, that forwards its calls to a local anvil, where the accounts it uses are
 * unlocked (anvil's own, or others it impersonates), so `eth_sendTransaction` is signed by the node.
 * A wallet given a private key signs messages (`personal_sign`) with it in the test process.
 */
import chromium from '@sparticuz/chromium';
import { Wallet, getBytes } from 'ethers';
import { join } from 'node:path';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const launchBrowser = async (): Promise<Browser> =>
  playwright.launch({
    executablePath: await chromium.executablePath(),
    // One process per page (not the serverless --single-process), so that closing a scenario's context leaves the browser running.
    args: [...chromium.args.filter((arg) => arg !== '--single-process'), '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    headless: true,
  });

export interface WalletOptions {
  account: string;
  /** Signs `personal_sign` here with this key (an account anvil does not hold the key of). */
  privateKey?: string;
  /** `eth_sendTransaction` answers EIP-1193's user-rejected error (4001) instead of sending. */
  rejectSend?: boolean;
  /** The first token transfer sends half its amount (a buyer who edited the amount in the wallet). */
  halveFirstTransfer?: boolean;
  /** The wallet starts on this chain and moves to anvil's when the page asks it to switch. */
  startOnChain?: number;
}

/**
 * The wallet the page finds: `window.ethereum` and an EIP-6963 announcement of the same provider.
 * Chain calls go to anvil through a function the test exposes to the page (the page's CSP allows
 * connections to its own origin only; the wallet, like a real extension, is not bound by it).
 */
export const walletScript = (options: WalletOptions) => `(() => {
  const options = ${JSON.stringify({ ...options, privateKey: undefined, signsHere: Boolean(options.privateKey) })};
  const calls = (window.__walletCalls = []);
  // The transactions the page asked the wallet to send, as it asked them (before any edit below).
  const sent = (window.__walletSent = []);
  let chain = options.startOnChain;
  // Once per tab, across reloads (this script runs again on each page load).
  let halve = options.halveFirstTransfer && !sessionStorage.getItem('halved');
  const provider = {
    async request({ method, params = [] }) {
      calls.push(method);
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [options.account];
      if (method === 'eth_chainId' && chain !== undefined) return '0x' + chain.toString(16);
      if (method === 'wallet_switchEthereumChain') {
        chain = undefined;
        return null;
      }
      if (method === 'personal_sign' && options.signsHere) return window.__walletSign(params[0]);
      if (method === 'eth_sendTransaction') sent.push({ ...params[0] });
      if (method === 'eth_sendTransaction' && options.rejectSend) throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
      if (method === 'eth_sendTransaction' && halve && params[0].data) {
        halve = false;
        sessionStorage.setItem('halved', 'yes');
        const data = params[0].data;
        const amount = BigInt('0x' + data.slice(74)) / 2n;
        params = [{ ...params[0], data: data.slice(0, 74) + amount.toString(16).padStart(64, '0') }];
      }
      const answer = await window.__anvil(method, params);
      if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code, data: answer.error.data });
      return answer.result;
    },
    on() {},
    removeListener() {},
  };
  window.ethereum = provider;
  const icon = 'data:image/svg+xml,' + encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="11" fill="#f59e0b"/></svg>');
  const detail = Object.freeze({ info: Object.freeze({ uuid: '2f6b1c9e-8d4a-4f51-9d55-1b1f0b8a0c11', name: 'Test Wallet', icon, rdns: 'org.example.testwallet' }), provider });
  const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }));
  window.addEventListener('eip6963:requestProvider', announce);
  announce();
})();`;

/** A JSON-RPC call to the chain. */
export const rpc = async <T = unknown>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> => {
  const response = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const answer = (await response.json()) as { result?: T; error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
};

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  /** Page errors, console errors and dialogs: a scenario expects none. */
  problems: string[];
}

/** A page in a context of its own (phone-like below 500 px wide), with the test wallet when one is given. */
export const openPage = async (browser: Browser, rpcUrl: string, viewport: { width: number; height: number }, wallet?: WalletOptions): Promise<OpenedPage> => {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, isMobile: viewport.width < 500, hasTouch: viewport.width < 500 });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  if (wallet) {
    await page.exposeFunction('__anvil', async (method: string, params: unknown[]) => {
      const response = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      return response.json();
    });
    if (wallet.privateKey) {
      const signer = new Wallet(wallet.privateKey);
      await page.exposeFunction('__walletSign', (messageHex: string) => signer.signMessage(getBytes(messageHex)));
    }
    await page.addInitScript({ content: walletScript(wallet) });
  }
  return { context, page, problems };
};

/** Screenshots of a scenario's steps into `dir`: `<scenario>-<step>.png`, the whole page. */
export const photographer = (dir: string) => (page: Page, scenario: string, step: string) => page.screenshot({ path: join(dir, `${scenario}-${step}.png`), fullPage: true });

/** A wallet no one has used: anvil sends its transactions (impersonated, with 10 test ETH); it signs messages here. */
export const impersonatedWallet = async (rpcUrl: string) => {
  const wallet = Wallet.createRandom();
  const account = wallet.address.toLowerCase();
  await rpc(rpcUrl, 'anvil_setBalance', [account, '0x8ac7230489e80000']);
  await rpc(rpcUrl, 'anvil_impersonateAccount', [account]);
  return { account, privateKey: wallet.privateKey };
};

/** Signs in on the sign-in page the console shows without a session; the same address then shows its page. */
export const signInToConsole = async (page: Page) => {
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.locator('#sign-out').waitFor({ timeout: 20_000 });
};
