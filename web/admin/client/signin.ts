/**
 * Signing in with a wallet (EIP-4361 through EIP-1193): the wallet's account, a nonce from the
 * service, the message signed with `personal_sign`, then the service's login, which sets the session
 * cookie and the CSRF cookie. The same address then shows the page asked for.
 */
import { signInMessage, utf8Hex } from '../eth';
import { api, byId, say } from './kit';
import { findWallets, rememberWallet, walletMessage, type Wallet } from './wallet';

const body = document.body.dataset;

const showError = (text: string) => {
  const box = byId('signin-error');
  if (!box) return;
  box.textContent = text;
  box.hidden = text === '';
};

let signingIn = false;

const signIn = async (wallet: Wallet, button: HTMLButtonElement) => {
  if (signingIn) return;
  signingIn = true;
  showError('');
  const label = button.textContent;
  const step = (text: string) => {
    button.textContent = text;
    say(text);
  };
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.classList.add('is-busy');
  try {
    step(`Waiting for ${wallet.info.name}…`);
    const accounts = (await wallet.provider.request({ method: 'eth_requestAccounts' })) as string[];
    const account = accounts?.[0];
    if (!account) throw new Error('the wallet shared no account');
    const nonce = await api<{ nonce: string; domain: string; uri: string; chainId: number }>('GET', body.nonceUrl ?? '');
    if (!nonce.ok) throw new Error(nonce.json.message);
    const message = signInMessage({ ...nonce.json, address: account, statement: 'Sign in to the merchant console.', issuedAt: new Date() });
    step('Sign the message in your wallet…');
    const signature = String(await wallet.provider.request({ method: 'personal_sign', params: [utf8Hex(message), account] }));
    step('Signing in…');
    const login = await api<{ wallet: string }>('POST', body.loginUrl ?? '', { message, signature });
    if (!login.ok) throw new Error(login.json.message);
    rememberWallet(wallet);
    step('Signed in. Opening your console…');
    location.reload();
  } catch (error) {
    showError(error instanceof Error && !('code' in error) ? `Sign-in failed: ${error.message}` : walletMessage(error));
    button.textContent = label;
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.classList.remove('is-busy');
    button.focus();
    signingIn = false;
  }
};

export const enhanceSignIn = async () => {
  const list = byId('wallet-list');
  const state = byId('wallet-state');
  if (!list || !state) return;
  const wallets = await findWallets();
  if (wallets.length === 0) {
    state.textContent = 'No browser wallet was found. Install a wallet extension, or open this page in your wallet app’s browser.';
    return;
  }
  state.textContent = wallets.length === 1 ? 'Sign in with your wallet.' : 'Choose the wallet to sign in with.';
  for (const wallet of wallets) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'button button-primary button-wallet';
    if (/^data:image\//.test(wallet.info.icon)) {
      const icon = document.createElement('img');
      icon.src = wallet.info.icon;
      icon.alt = '';
      button.append(icon);
    }
    button.append(`Sign in with ${wallet.info.name}`);
    button.addEventListener('click', () => void signIn(wallet, button));
    list.append(button);
  }
};
