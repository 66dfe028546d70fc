/**
 * What the console asks of a wallet, as plain values: EIP-55 addresses (a sign-in message must carry
 * one), the split factory's `createSplit` call and a split's `distribute` call, ABI-encoded by hand
 * (the bundle carries no Ethereum library), and the EIP-4361 sign-in message. Pure, no DOM: tested
 * in Node against ethers' and siwe's own encodings and bundled into the console's script.
 */
import { keccakText } from './keccak';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const isAddress = (value: unknown): value is string => typeof value === 'string' && ADDRESS.test(value);

/** EIP-55: each letter of the address upper-cased where the Keccak-256 of the lower-case address has a nibble of 8 or more. */
export const checksumAddress = (address: string): string => {
  if (!isAddress(address)) throw new Error(`not an address: ${address}`);
  const lower = address.slice(2).toLowerCase();
  const hash = keccakText(lower);
  let out = '0x';
  for (let i = 0; i < lower.length; i++) out += parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out;
};

/** The first four bytes of the Keccak-256 of a function's signature, as `0x` hex. */
export const selectorOf = (signature: string): string => `0x${keccakText(signature).slice(0, 8)}`;

const word = (value: bigint | number | string): string => {
  const number = BigInt(value);
  if (number < 0n || number >= 1n << 256n) throw new Error('value out of range for a uint256');
  return number.toString(16).padStart(64, '0');
};
const addressWord = (address: string): string => {
  if (!isAddress(address)) throw new Error(`not an address: ${address}`);
  return address.slice(2).toLowerCase().padStart(64, '0');
};

export interface Payee {
  address: string;
  bps: number;
}

/**
 * `createSplit(address[] payees, uint16[] bps)` on the split factory: two dynamic arrays, so two
 * offsets in the head, then each array's length and elements. The factory is permissionless and
 * idempotent: the merchant's own wallet may send it.
 */
export const createSplitCalldata = (payees: readonly Payee[]): string => {
  if (payees.length === 0) throw new Error('a split needs payees');
  for (const payee of payees) if (!Number.isInteger(payee.bps) || payee.bps < 0 || payee.bps > 0xffff) throw new Error(`bps out of range: ${payee.bps}`);
  const n = payees.length;
  const first = 64;
  const second = first + 32 * (n + 1);
  return [
    selectorOf('createSplit(address[],uint16[])'),
    word(first),
    word(second),
    word(n),
    ...payees.map((payee) => addressWord(payee.address)),
    word(n),
    ...payees.map((payee) => word(payee.bps)),
  ].join('');
};

/** `distribute(address token)` on a split (the zero address: ETH); anyone may call it. */
export const distributeCalldata = (token: string): string => `${selectorOf('distribute(address)')}${addressWord(token)}`;

/** A JSON-RPC quantity: `0x` and the hex digits, no leading zeros. */
export const toQuantity = (value: string | bigint | number): string => `0x${BigInt(value).toString(16)}`;

/** UTF-8 text as `0x` hex, as `personal_sign` takes it. */
export const utf8Hex = (text: string): string => `0x${Array.from(new TextEncoder().encode(text), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;

export interface SignInFields {
  /** From `GET /api/auth/nonce`: the service's domain, URI, chain and the single-use nonce. */
  domain: string;
  uri: string;
  chainId: number;
  nonce: string;
  /** The wallet's account, any case: written checksummed, as EIP-4361 requires. */
  address: string;
  statement: string;
  issuedAt: Date;
}

/** The EIP-4361 message a wallet signs to sign in (the fields the service checks, and a statement). */
export const signInMessage = (fields: SignInFields): string =>
  [
    `${fields.domain} wants you to sign in with your Ethereum account:`,
    checksumAddress(fields.address),
    '',
    fields.statement,
    '',
    `URI: ${fields.uri}`,
    'Version: 1',
    `Chain ID: ${fields.chainId}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issuedAt.toISOString()}`,
  ].join('\n');
