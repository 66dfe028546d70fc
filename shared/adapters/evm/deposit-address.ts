/**
 * A receipt's deposit address, computed off chain exactly as DepositFactory's CREATE2 makes it, so the
 * service can hand it out before anything is deployed there (the rule of what names a receipt is in
 * shared/domain/deposit.ts). Pure: no provider, no RPC.
 */
import { AbiCoder, ZeroAddress, concat, getAddress, getCreate2Address, getCreateAddress, isHexString, keccak256 } from 'ethers';
import { RECEIPT_KEY_TYPES, receiptKeyValues, type ReceiptKeyInput } from '../../domain/deposit';

const abi = AbiCoder.defaultAbiCoder();

/** The bytes32 that names a receipt on chain: keccak256(abi.encode(version, chainId, wallet, receiptId)), as DepositFactory.receiptKey. */
export const receiptKey = (input: ReceiptKeyInput): string => keccak256(abi.encode(RECEIPT_KEY_TYPES, receiptKeyValues(input)));

/**
 * The forwarder implementation a factory uses without asking the chain: the factory creates it in its
 * constructor, a contract's first CREATE, and a contract's nonce starts at 1 (EIP-161).
 */
export const forwarderImplementation = (factory: string): string => getCreateAddress({ from: getAddress(factory), nonce: 1 }).toLowerCase();

/**
 * The ERC-1167 creation code OpenZeppelin's Clones deploys for `implementation`: a 10-byte constructor
 * that returns the 45-byte proxy delegating every call to it.
 */
const cloneInitCode = (implementation: string) => concat(['0x3d602d80600a3d3981f3363d3d373d3d3d363d73', getAddress(implementation), '0x5af43d82803e903d91602b57fd5bf3']);

export interface DepositAddressInput {
  /** The DepositFactory (DEPOSIT_FACTORY_ADDRESS). */
  factory: string;
  /** Its forwarder implementation: `forwarderImplementation(factory)`, or the factory's `implementation()`. */
  implementation: string;
  /** The shop's split: the only place the forwarder can send to. */
  split: string;
  /** `receiptKey(...)` of the receipt. */
  receiptKey: string;
}

/** The deposit address of a receipt paying into `split`, lower-case: what DepositFactory.predictForwarder answers. */
export const depositAddress = ({ factory, implementation, split, receiptKey: key }: DepositAddressInput): string => {
  // The factory refuses the zero split (ZeroSplit): an address nothing could ever be swept from.
  if (getAddress(split) === ZeroAddress) throw new RangeError('no deposit address for the zero split');
  if (!isHexString(key, 32)) throw new RangeError(`the receipt key must be 32 bytes of 0x-prefixed hex, not ${key}`);
  const salt = keccak256(abi.encode(['address', 'bytes32'], [split, key]));
  return getCreate2Address(getAddress(factory), salt, keccak256(cloneInitCode(implementation))).toLowerCase();
};
