/**
 * The transaction that sends a refund from the merchant's wallet: an ERC-20 `transfer(to, amount)`
 * on the token that paid, or plain ETH. Pure, no DOM: tested in Node against ethers' encoding and
 * bundled into the console's script.
 */
import { isAddress, selectorOf, toQuantity } from './eth';

export interface RefundCall {
  from: string;
  to: string;
  /** Atomic units, decimal. */
  amount: string;
  /** The token contract; empty for ETH. */
  tokenAddress: string;
}

const positive = (value: string): bigint => {
  const number = BigInt(value);
  if (number <= 0n || number >= 1n << 256n) throw new Error('amount out of range');
  return number;
};

/** `transfer(address,uint256)` calldata. */
export const transferCalldata = (to: string, amount: string): string => {
  if (!isAddress(to)) throw new Error(`not an address: ${to}`);
  return `${selectorOf('transfer(address,uint256)')}${to.slice(2).toLowerCase().padStart(64, '0')}${positive(amount).toString(16).padStart(64, '0')}`;
};

/** The `eth_sendTransaction` parameters for a refund. */
export const refundTransaction = (call: RefundCall): { from: string; to: string; value: string; data?: string } =>
  call.tokenAddress
    ? { from: call.from, to: call.tokenAddress, value: '0x0', data: transferCalldata(call.to, call.amount) }
    : { from: call.from, to: call.to, value: toQuantity(positive(call.amount)) };
