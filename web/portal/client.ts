/**
 * The payment page's script: turns the server-rendered page into a wallet checkout. It asks the
 * service for a quote in the chosen token, finds the buyer's wallets (EIP-6963, else
 * `window.ethereum`), sends the payment with EIP-1193 calls only (no Ethereum library: the ERC-20
 * call is encoded by hand), reports the tracking statuses and the hash, and follows the receipt until
 * it is paid. Whatever goes wrong, the receipt stays payable and the pay button works again; once the
 * receipt can no longer be paid (paid elsewhere, expired, refunded), every pay control goes.
 */
import type { PaymentAnswer, PortalView, QuoteView } from '../../shared/domain/portal-views';
import { brandProperties } from './colors';
import { formatCountdown, isSettled, PARTLY_PAID, remainingUnits, shortHex, shownQuote, shownUnits, statusLabels, transactionUrl } from './format';
import { buyerMessages, classifyWalletError, errorText, paymentTransaction, toQuantity, type Problem } from './wallet-calls';
import { discoverWallets, type Eip1193Provider, type Wallet } from './wallets';

type Answer<T> = { ok: true; status: number; json: T } | { ok: false; status: number; json: { error?: string; message?: string } };

const POLL_MS = 1_000;
/** How long the page follows a sent payment before it says the shop will be told later. */
const FOLLOW_MS = 10 * 60_000;
/** Reported hashes are submitted again this often while the chain has not confirmed them. */
const RESUBMIT_EVERY = 3;
/** A quote with less than this left is renewed before paying: the buyer needs time to confirm. */
const QUOTE_MARGIN_MS = 20_000;
/**
 * How often a page offering payment reads the receipt when no payment of its own is under way, so a
 * payment made elsewhere (a phone wallet from the QR code, another tab, the card checkout) or the
 * receipt's end takes its pay controls away; a hidden tab reads it less often (the per-receipt limit
 * is shared by every tab open on it).
 */
const WATCH_MS = 5_000;
const HIDDEN_WATCH_MS = 30_000;

const chainNames: Record<number, string> = { 1: 'Ethereum', 8453: 'Base', 84532: 'Base Sepolia', 31337: 'the local test network' };

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T | null;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const page = byId('portal');
const data = page?.dataset ?? {};
const api = data.api ?? '';

const state = {
  quote: null as QuoteView | null,
  wallets: [] as Wallet[],
  wallet: null as Wallet | null,
  account: null as string | null,
  busy: false,
  /** The receipt can no longer be paid: the pay controls are gone for good. */
  closed: false,
  /** What earlier transfers of a token already brought in (all of them, atomic units), after an underpayment. */
  received: null as { token: string; amount: string } | null,
};

const call = async <T>(path: string, body?: unknown): Promise<Answer<T>> => {
  try {
    const response = await fetch(`${api}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      cache: 'no-store',
    });
    const json = await response.json().catch(() => ({}));
    return response.ok ? { ok: true, status: response.status, json: json as T } : { ok: false, status: response.status, json };
  } catch {
    return { ok: false, status: 0, json: { error: 'network', message: 'The connection to the shop was interrupted.' } };
  }
};

/** Tracking statuses and errors are for the merchant: the buyer's payment never waits on them. */
const report = (event: { status?: string; wallet?: string; error?: { code: string; message?: string } }) => {
  void call('/events', event);
};

// ---- What the buyer sees ----

const say = (text: string) => {
  const live = byId('live');
  if (live) live.textContent = text;
};

const showProblem = (problem: Problem | null, detail?: string) => {
  const box = byId('problem');
  if (!box) return;
  box.hidden = problem === null;
  box.classList.remove('problem-warning');
  if (!problem) return;
  const { message, action } = buyerMessages[problem];
  byId('problem-message')!.textContent = message;
  byId('problem-action')!.textContent = detail ? `${action} ${detail}` : action;
};

/** A problem with a message of its own (a refused quote, a payment the service could not accept, a part payment). */
const showServiceProblem = (message: string, action: string, tone: 'danger' | 'warning' = 'danger') => {
  const box = byId('problem');
  if (!box) return;
  box.hidden = false;
  box.classList.toggle('problem-warning', tone === 'warning');
  byId('problem-message')!.textContent = message;
  byId('problem-action')!.textContent = action;
};

const setBadge = (text: string, tone: 'neutral' | 'success' | 'warning' | 'danger') => {
  const badge = byId('status-badge');
  if (!badge) return;
  badge.textContent = text;
  badge.className = `badge badge-${tone}`;
};

const setStatus = (status: PortalView['status']) => setBadge(statusLabels[status], isSettled(status) ? 'success' : status === 'failed' ? 'danger' : 'neutral');

/**
 * What is left to send in the quote's token after an underpayment (atomic units), or null: the
 * service adds up a receipt's transfers of a token, so the rest of the quote completes it.
 */
const remaining = (): string | null => {
  const quote = state.quote;
  if (!quote || state.received?.token !== quote.token) return null;
  const left = BigInt(quote.amount) - BigInt(state.received.amount);
  return left > 0n ? left.toString() : null;
};

const payButton = () => byId<HTMLButtonElement>('pay-button');

/** The pay button says what it will send, and works once a wallet is connected and the amount is fixed. */
const refreshPayButton = () => {
  const button = payButton();
  if (!button) return;
  const quote = state.quote;
  const left = remaining();
  button.textContent = quote ? `Pay ${shownQuote(left ? { ...quote, amount: left } : quote)}` : 'Pay';
  button.disabled = state.closed || state.busy || !state.account || !quote;
};

const showQuote = (quote: QuoteView | null) => {
  state.quote = quote;
  const left = remaining();
  const amount = byId('quote-amount');
  if (amount) amount.textContent = quote ? shownQuote(left ? { ...quote, amount: left } : quote) : '…';
  const label = document.querySelector('.quote-label');
  if (label) label.textContent = left ? 'Left to pay' : 'You pay';
  // The QR code asks for the whole quote: after part of it arrived, only the wallet pays the rest.
  const details = byId('qr-details');
  if (details) details.hidden = left !== null;
  for (const element of document.querySelectorAll<HTMLElement>('[data-amount-for]')) {
    if (quote && element.dataset.amountFor === quote.token) element.textContent = shownQuote(quote);
  }
  const qr = byId<HTMLImageElement>('qr-image');
  if (qr && quote) {
    qr.src = `${data.qr}?token=${encodeURIComponent(quote.token)}&q=${encodeURIComponent(quote.quoteId)}`;
    qr.alt = `QR code: pay ${shownQuote(quote)} from a phone wallet`;
    qr.hidden = false;
  }
  refreshPayButton();
  tick();
};

// ---- Quotes ----

let quoting = 0;

const quoteErrorText: Record<string, [string, string]> = {
  price_stale: ['ETH cannot be priced right now.', 'Choose USDC or USDT, or try again in a minute.'],
  unsupported_token: ['This token is not accepted here.', 'Choose another token.'],
  receipt_not_payable: ['This receipt cannot be paid any more.', 'Reload the page to see its status.'],
  split_required: ['This shop cannot take payments yet.', 'Please contact the shop.'],
};

/** Fixes the amount in a token for a few minutes; a newer choice wins over an older answer. */
const requestQuote = async (token: string) => {
  if (state.closed) return;
  const mine = ++quoting;
  showQuote(null);
  showProblem(null);
  const answer = await call<{ ok: true; quote: QuoteView }>('/quote', { token });
  if (mine !== quoting || state.closed) return;
  if (answer.ok) {
    showQuote(answer.json.quote);
    return;
  }
  const [message, action] = quoteErrorText[answer.json.error ?? ''] ?? ['The amount could not be fixed.', 'Try again in a moment.'];
  showServiceProblem(message, action);
};

/** The quote's countdown; an expired quote is renewed (unless a payment is under way). */
const tick = () => {
  const expiry = byId('quote-expiry');
  const quote = state.quote;
  if (!expiry || state.closed) return;
  if (!quote) {
    expiry.textContent = '';
    return;
  }
  const left = quote.expiresAt - Date.now();
  if (left <= 0 && !state.busy) {
    expiry.textContent = 'This amount expired. Getting a new one…';
    void requestQuote(quote.token);
    return;
  }
  expiry.textContent = `Amount held for ${formatCountdown(left)}`;
};

// ---- Wallets ----

const walletList = () => byId('wallet-list');

const renderWallets = () => {
  const list = walletList();
  const status = byId('wallet-state');
  if (!list || !status || state.closed) return;
  // A list drawn again (a wallet announced late, discovery settled) keeps the keyboard where it was.
  const focused = list.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.wallet : undefined;
  list.replaceChildren();
  if (state.account && state.wallet) {
    status.textContent = `Connected: ${state.wallet.info.name} · ${shortHex(state.account)}`;
    return;
  }
  if (state.wallets.length === 0) {
    status.textContent = `${buyerMessages.NO_WALLET.message} ${buyerMessages.NO_WALLET.action}`;
    const details = byId<HTMLDetailsElement>('qr-details');
    if (details) details.open = true;
    return;
  }
  status.textContent = state.wallets.length === 1 ? 'Connect your wallet to pay.' : 'Choose the wallet to pay with.';
  for (const wallet of state.wallets) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'button';
    if (/^data:image\//.test(wallet.info.icon)) {
      const icon = document.createElement('img');
      icon.src = wallet.info.icon;
      icon.alt = '';
      button.append(icon);
    }
    button.append(`Connect ${wallet.info.name}`);
    button.dataset.wallet = wallet.info.uuid;
    button.addEventListener('click', () => void connect(wallet));
    list.append(button);
    if (wallet.info.uuid === focused) button.focus();
  }
};

const addWallet = (wallet: Wallet) => {
  if (state.wallets.some((known) => known.info.uuid === wallet.info.uuid || known.provider === wallet.provider)) return;
  state.wallets.push(wallet);
  if (!state.account) renderWallets();
};

const connect = async (wallet: Wallet) => {
  showProblem(null);
  say(`Waiting for ${wallet.info.name}…`);
  try {
    const accounts = (await wallet.provider.request({ method: 'eth_requestAccounts' })) as string[];
    const account = accounts?.[0];
    if (!account) throw new Error('the wallet shared no account');
    state.wallet = wallet;
    state.account = account;
    wallet.provider.on?.('accountsChanged', (...args: unknown[]) => {
      const [next] = (args[0] as string[] | undefined) ?? [];
      state.account = next ?? null;
      if (!next) state.wallet = null;
      renderWallets();
      refreshPayButton();
    });
    say('');
    report({ status: 'buyer_logged_in', wallet: account });
    renderWallets();
    refreshPayButton();
    payButton()?.focus();
  } catch (error) {
    say('');
    fail(classifyWalletError(error), error);
  }
};

/** Shows a wallet problem, tells the merchant, and leaves the page ready for another try. */
const fail = (problem: Problem, error?: unknown, detail?: string) => {
  showProblem(problem, detail);
  const code = problem === 'WRONG_CHAIN' || problem === 'NO_WALLET' ? 'PORTAL_SYS_GENERIC_FAILURE' : problem;
  report({ error: { code, message: error === undefined ? buyerMessages[problem].message : errorText(error) } });
  state.busy = false;
  refreshPayButton();
};

/** The wallet must be on the quote's chain: asks it to switch; false when it did not. */
const ensureChain = async (provider: Eip1193Provider, chainId: number): Promise<boolean> => {
  const current = Number(await provider.request({ method: 'eth_chainId' }));
  if (current === chainId) return true;
  say(`Asking your wallet to switch to ${chainNames[chainId] ?? `chain ${chainId}`}…`);
  try {
    await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: toQuantity(chainId) }] });
  } catch (error) {
    if (classifyWalletError(error) === 'PORTAL_CHAIN_USER_REJECTED') throw error;
    return false;
  }
  return Number(await provider.request({ method: 'eth_chainId' })) === chainId;
};

// ---- Paying ----

const pay = async () => {
  const wallet = state.wallet;
  const account = state.account;
  if (state.closed || state.busy || !wallet || !account || !state.quote) return;
  const token = state.quote.token;
  state.busy = true;
  showProblem(null);
  refreshPayButton();
  try {
    // Paid from elsewhere since the last look (the watch reads every few seconds): no second payment.
    const current = await call<PortalView>('');
    if (current.ok && !current.json.payable) {
      end(current.json);
      return;
    }
    if (!state.quote || state.quote.expiresAt - Date.now() < QUOTE_MARGIN_MS) {
      say('Getting a new amount…');
      await requestQuote(token);
      say('');
      if (!state.quote) {
        // The quote's own problem is on the page already.
        state.busy = false;
        refreshPayButton();
        return;
      }
    }
    const quote = state.quote;
    report({ status: 'checkout_initialized' });
    if (!(await ensureChain(wallet.provider, quote.chainId))) {
      say('');
      fail('WRONG_CHAIN', new Error(`the wallet is not on chain ${quote.chainId}`), `Network: ${chainNames[quote.chainId] ?? `chain ${quote.chainId}`}.`);
      return;
    }
    say('Confirm the payment in your wallet…');
    const left = remaining();
    const transaction = paymentTransaction(left ? { ...quote, amount: left } : quote, account);
    const hash = String(await wallet.provider.request({ method: 'eth_sendTransaction', params: [transaction] }));
    report({ status: 'checkout_success' });
    await follow(hash);
  } catch (error) {
    say('');
    fail(classifyWalletError(error), error);
  }
};

const successText = (view: PortalView) => {
  const payment = view.payment;
  const token = view.tokens.find((candidate) => candidate.symbol === payment?.token);
  const amount = payment?.amount && token ? `${shownUnits(payment.amount, token.decimals)} ${token.symbol}` : data.shop ?? '';
  return `Thank you. ${data.shop ?? 'The shop'} received ${amount}.`;
};

/**
 * Takes every pay control off the page for good (the wallet form with its tokens, QR code and
 * wallets, and the card button): a receipt that is paid, refunded or past its end offers nothing
 * that would start another payment.
 */
const closePayment = () => {
  state.closed = true;
  state.busy = false;
  for (const id of ['pay', 'card']) {
    const section = byId(id);
    if (section) section.hidden = true;
  }
  for (const control of document.querySelectorAll<HTMLButtonElement | HTMLInputElement>('#pay button, #pay input, #card button')) control.disabled = true;
  const due = byId('total-title');
  if (due) due.textContent = 'Total';
  const expiry = byId('summary-expiry');
  if (expiry) expiry.hidden = true;
};

/** The success screen: the pay controls give way to the receipt of the payment, which takes the focus. */
const succeed = (view: PortalView, hash?: string) => {
  closePayment();
  setStatus(view.status);
  // The state the page opened with (confirming, failed, part paid) is over.
  const opened = byId('state');
  if (opened) opened.hidden = true;
  const success = byId('success');
  if (!success) return;
  byId('success-text')!.textContent = successText(view);
  const tx = byId('success-tx')!;
  const txHash = view.payment?.transactionHash ?? hash;
  const url = txHash ? transactionUrl(data.explorer ?? null, txHash) : null;
  tx.replaceChildren();
  if (url) {
    const link = document.createElement('a');
    link.className = 'tx-link';
    link.href = url;
    link.rel = 'noreferrer noopener';
    link.target = '_blank';
    link.textContent = `View the transaction ${shortHex(txHash!)}`;
    tx.append(link);
  } else if (txHash) {
    tx.append('Transaction ');
    const code = document.createElement('span');
    code.className = 'mono';
    code.textContent = txHash;
    tx.append(code);
  }
  success.hidden = false;
  success.focus();
};

/**
 * The receipt can no longer be paid: paid shows the success state here; any other end (expired,
 * refunded, failed for good) reloads the page, which the server renders with its reason and no
 * pay controls (they are gone before, should the reload not come through).
 */
const end = (view: PortalView, hash?: string) => {
  if (isSettled(view.status)) {
    say('Payment received.');
    succeed(view, hash);
    return;
  }
  closePayment();
  location.reload();
};

const paymentProblems: Partial<Record<PaymentAnswer['outcome'], Problem>> = {
  reverted: 'PORTAL_CHAIN_TX_REVERTED',
  slippage: 'PORTAL_CHAIN_SLIPPAGE_EXCEEDED',
};

/** Answers that end the page's part: the receipt is paid, or the payment needs the buyer again. */
const handleAnswer = (answer: PaymentAnswer): 'done' | 'retry' | 'wait' => {
  const problem = paymentProblems[answer.outcome];
  if (problem) {
    fail(problem);
    return 'retry';
  }
  if (answer.outcome === 'underpaid' && answer.expected && answer.received && state.quote) {
    const { decimals, token } = state.quote;
    state.received = { token, amount: answer.received };
    say('');
    setBadge(PARTLY_PAID, 'warning');
    showServiceProblem(
      `Part of the payment arrived: ${shownUnits(answer.received, decimals)} of ${shownUnits(answer.expected, decimals)} ${token}.`,
      `Send the remaining ${remainingUnits(answer.received, answer.expected, decimals)} ${token} to complete it.`,
      'warning',
    );
    state.busy = false;
    showQuote(state.quote);
    return 'retry';
  }
  return 'wait';
};

/**
 * After the wallet answered a hash: reports it (again while the chain has not confirmed it) and
 * reads the receipt every second until it is paid, failed, or the payment needs the buyer again.
 */
const follow = async (hash: string) => {
  say('Payment sent. Waiting for the network to confirm it…');
  setStatus('checkout_success');
  const until = Date.now() + FOLLOW_MS;
  for (let round = 0; Date.now() < until; round++) {
    if (round % RESUBMIT_EVERY === 0) {
      const submitted = await call<PaymentAnswer>('/payments', { txHash: hash });
      if (submitted.ok && handleAnswer(submitted.json) === 'retry') return;
      if (!submitted.ok && ['transaction_already_used', 'not_a_payment'].includes(submitted.json.error ?? '')) {
        fail('PORTAL_SYS_GENERIC_FAILURE', new Error(submitted.json.message ?? submitted.json.error));
        return;
      }
    }
    const view = await call<PortalView>('');
    if (view.ok) {
      if (!view.json.payable) {
        end(view.json, hash);
        return;
      }
      if (view.json.status === 'failed') {
        setStatus('failed');
        const failure = view.json.failure;
        showServiceProblem(failure?.reason ?? buyerMessages.PORTAL_SYS_GENERIC_FAILURE.message, failure?.action ?? buyerMessages.PORTAL_SYS_GENERIC_FAILURE.action);
        state.busy = false;
        refreshPayButton();
        return;
      }
    }
    await sleep(POLL_MS);
  }
  say('The network has not confirmed the payment yet. You can close this page: the shop is told as soon as it arrives.');
  state.busy = false;
  refreshPayButton();
};

/**
 * A page offering payment follows the receipt while it stays payable (the page's own payment follows
 * it more closely, so this one waits while that runs).
 */
const watch = async () => {
  let lastRead = Date.now();
  while (!state.closed) {
    await sleep(WATCH_MS);
    if (state.busy || state.closed || (document.hidden && Date.now() - lastRead < HIDDEN_WATCH_MS)) continue;
    lastRead = Date.now();
    const view = await call<PortalView>('');
    if (view.ok && !view.json.payable && !state.busy && !state.closed) end(view.json);
  }
};

/** A page opened, not payable, after a payment was sent: follows the receipt until it is paid. */
const watchStatus = async () => {
  const until = Date.now() + FOLLOW_MS;
  while (Date.now() < until) {
    const view = await call<PortalView>('');
    if (view.ok && isSettled(view.json.status)) {
      location.reload();
      return;
    }
    await sleep(POLL_MS * 3);
  }
};

// ---- Start ----

const applyBrand = () => {
  const properties = brandProperties({ primary: data.brandPrimary, accent: data.brandAccent, background: data.brandBackground });
  for (const [name, value] of Object.entries(properties)) document.documentElement.style.setProperty(name, value);
};

const localTimes = () => {
  for (const element of document.querySelectorAll<HTMLTimeElement>('time[data-local-time]')) {
    const when = new Date(element.dateTime);
    if (!Number.isNaN(when.getTime())) element.textContent = when.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  }
};

/** Pay by card: a provider session for the receipt's USDC quote, then the provider's checkout page. */
const setUpCard = () => {
  const button = byId<HTMLButtonElement>('card-button');
  if (!button) return;
  button.hidden = false;
  button.addEventListener('click', async () => {
    button.disabled = true;
    const say = (text: string) => {
      const line = byId('card-state');
      if (line) line.textContent = text;
    };
    say('Opening the card payment…');
    const answer = await call<{ url: string }>('/onramp', {});
    if (answer.ok) {
      say('Taking you to the card payment…');
      window.location.assign(answer.json.url);
      return;
    }
    button.disabled = false;
    say(answer.json.message ?? 'The card payment could not be opened. Try again, or pay with crypto above.');
  });
};

const start = () => {
  if (!page) return;
  applyBrand();
  localTimes();
  const form = byId<HTMLFormElement>('pay-form');
  if (data.underpaidToken && data.underpaidReceived) state.received = { token: data.underpaidToken, amount: data.underpaidReceived };
  if (!form || data.payable !== 'true') {
    if (data.status === 'checkout_success' && !state.received) void watchStatus();
    return;
  }
  form.hidden = false;
  setUpCard();
  report({ status: 'link_opened' });
  form.addEventListener('change', (event) => {
    const input = event.target as HTMLInputElement;
    if (input.name === 'token' && input.checked) void requestQuote(input.value);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void pay();
  });
  const checked = form.querySelector<HTMLInputElement>('input[name="token"]:checked') ?? form.querySelector<HTMLInputElement>('input[name="token"]');
  if (checked) {
    checked.checked = true;
    void requestQuote(checked.value);
  }
  window.setInterval(tick, 1_000);
  void watch();
  refreshPayButton();
  // EIP-6963: every installed wallet announces itself; `window.ethereum` stands in for older ones.
  discoverWallets(addWallet, renderWallets);
};

start();
