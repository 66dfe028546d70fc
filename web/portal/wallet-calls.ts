/**
 * What the portal asks of a wallet, as plain values: the payment transaction for a quote (ETH, or an
 * ERC-20 `transfer` encoded by hand, so the page carries no Ethereum library), and what a wallet's
 * error means for the buyer. Pure, no DOM: tested on its own and bundled into the page's script.
 */
import type { FailureCode } from '../../shared/domain/failures';
import type { QuoteView } from '../../shared/domain/portal-views';

/** `transfer(address,uint256)`: the first four bytes of its Keccak-256 hash. */
export const TRANSFER_SELECTOR = '0xa9059cbb';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** A JSON-RPC quantity: `0x` and the hex digits, no leading zeros ("0x0" for zero). */
export const toQuantity = (value: string | bigint | number): string => `0x${BigInt(value).toString(16)}`;

const word = (hex: string) => hex.padStart(64, '0');

/** The calldata of `transfer(to, amount)`: the selector and two 32-byte words (the address, the amount). */
export const transferCalldata = (to: string, amount: string | bigint): string => {
  if (!ADDRESS.test(to)) throw new Error(`not an address: ${to}`);
  const value = BigInt(amount);
  if (value < 0n || value >= 2n ** 256n) throw new Error('amount out of range');
  return `${TRANSFER_SELECTOR}${word(to.slice(2).toLowerCase())}${word(value.toString(16))}`;
};

export interface TransactionRequest {
  from: string;
  to: string;
  value?: string;
  data?: string;
}

/** The `eth_sendTransaction` parameters that pay a quote: ETH straight to its `payTo` (the receipt's deposit address), a token through its contract. */
export const paymentTransaction = (quote: Pick<QuoteView, 'tokenAddress' | 'payTo' | 'amount'>, from: string): TransactionRequest =>
  quote.tokenAddress
    ? { from, to: quote.tokenAddress, data: transferCalldata(quote.payTo, quote.amount) }
    : { from, to: quote.payTo, value: toQuantity(quote.amount) };

/** The codes the page reports (`events {error}`): all from the service's failure registry. */
export type ReportedCode = Extract<
  FailureCode,
  'PORTAL_CHAIN_USER_REJECTED' | 'PORTAL_CHAIN_INSUFFICIENT_BALANCE' | 'PORTAL_CHAIN_TX_REVERTED' | 'PORTAL_CHAIN_SLIPPAGE_EXCEEDED' | 'PORTAL_SYS_GENERIC_FAILURE'
>;

/** What went wrong, as the buyer is told: a reported code, or a state of the browser nothing is reported for. */
export type Problem = ReportedCode | 'WRONG_CHAIN' | 'NO_WALLET';

/** The buyer's words for each problem (the registry's are written for the merchant). */
export const buyerMessages: Record<Problem, { message: string; action: string }> = {
  PORTAL_CHAIN_USER_REJECTED: { message: 'You cancelled the request in your wallet.', action: 'Nothing was sent. Press Pay again when you are ready.' },
  PORTAL_CHAIN_INSUFFICIENT_BALANCE: {
    message: 'Your wallet does not hold enough for this payment.',
    action: 'Add funds (and a little ETH for the network fee), or choose another token, then try again.',
  },
  PORTAL_CHAIN_TX_REVERTED: { message: 'The network did not accept the transaction.', action: 'Nothing was paid. Try again; if it happens again, contact the shop.' },
  PORTAL_CHAIN_SLIPPAGE_EXCEEDED: { message: 'The ETH price moved too far before the payment arrived.', action: 'Pay again with a new amount, or choose USDC or USDT.' },
  PORTAL_SYS_GENERIC_FAILURE: { message: 'Something went wrong with the payment.', action: 'Try again. If it keeps happening, scan the QR code with your phone’s wallet instead.' },
  WRONG_CHAIN: { message: 'Your wallet is on another network.', action: 'Switch your wallet to the network named below, then press Pay again.' },
  NO_WALLET: { message: 'No browser wallet was found.', action: 'Install a wallet extension, open this page in your wallet’s browser, or scan the QR code.' },
};

/** EIP-1193: the user rejected the request. */
export const USER_REJECTED = 4001;

const INSUFFICIENT = /insufficient (funds|balance)|exceeds balance|InsufficientBalance|0xe450d38c/i;

/** Every message a wallet error carries (wallets nest the node's answer in `data`, `error` or `cause`). */
const messagesOf = (error: unknown, depth = 0): string[] => {
  if (error === null || typeof error !== 'object' || depth > 3) return typeof error === 'string' ? [error] : [];
  const record = error as Record<string, unknown>;
  return [
    ...(typeof record.message === 'string' ? [record.message] : []),
    ...(typeof record.data === 'string' ? [record.data] : []),
    ...['data', 'error', 'cause'].flatMap((key) => messagesOf(record[key], depth + 1)),
  ];
};

const codesOf = (error: unknown, depth = 0): unknown[] => {
  if (error === null || typeof error !== 'object' || depth > 3) return [];
  const record = error as Record<string, unknown>;
  return [record.code, ...['data', 'error', 'cause'].flatMap((key) => codesOf(record[key], depth + 1))];
};

/** What a wallet's error means: the buyer said no, the wallet lacks funds, or anything else. */
export const classifyWalletError = (error: unknown): ReportedCode => {
  if (codesOf(error).some((code) => code === USER_REJECTED || code === 'ACTION_REJECTED')) return 'PORTAL_CHAIN_USER_REJECTED';
  if (messagesOf(error).some((message) => INSUFFICIENT.test(message))) return 'PORTAL_CHAIN_INSUFFICIENT_BALANCE';
  return 'PORTAL_SYS_GENERIC_FAILURE';
};

/** A short text of a wallet's error for the merchant's record (events accept 300 characters). */
export const errorText = (error: unknown): string => (messagesOf(error)[0] ?? String(error)).slice(0, 300);
