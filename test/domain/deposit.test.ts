import { AbiCoder, concat, getAddress, getCreateAddress, keccak256 } from 'ethers';
import { describe, expect, it } from 'vitest';
import { depositAddress, forwarderImplementation, receiptKey } from '../../shared/adapters/evm/deposit-address';
import { RECEIPT_KEY_VERSION, receiptKeyValues } from '../../shared/domain/deposit';

const wallet = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const otherWallet = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';

describe('receipt key fields', () => {
  it.each([
    { case: 'a receipt on Base', input: { chainId: 8453, wallet, receiptId: 'order-1001' }, values: [RECEIPT_KEY_VERSION, 8453n, wallet, 'order-1001'] },
    { case: 'a checksummed wallet, stored lower-case', input: { chainId: 31337, wallet: getAddress(wallet), receiptId: 'A_b-9' }, values: [RECEIPT_KEY_VERSION, 31337n, wallet, 'A_b-9'] },
    { case: 'the longest id', input: { chainId: 1, wallet, receiptId: 'x'.repeat(64) }, values: [RECEIPT_KEY_VERSION, 1n, wallet, 'x'.repeat(64)] },
  ])('encodes $case', ({ input, values }) => {
    expect(receiptKeyValues(input)).toEqual(values);
  });

  it.each([
    { case: 'a zero chain id', input: { chainId: 0, wallet, receiptId: 'r1' }, field: 'chainId' },
    { case: 'a fractional chain id', input: { chainId: 8453.5, wallet, receiptId: 'r1' }, field: 'chainId' },
    { case: 'a chain id past 2^53', input: { chainId: 2 ** 53, wallet, receiptId: 'r1' }, field: 'chainId' },
    { case: 'a wallet that is not an address', input: { chainId: 8453, wallet: '0x1234', receiptId: 'r1' }, field: 'wallet' },
    { case: 'an empty receipt id', input: { chainId: 8453, wallet, receiptId: '' }, field: 'receiptId' },
    { case: 'a receipt id with a space (no stored id has one)', input: { chainId: 8453, wallet, receiptId: 'r 1' }, field: 'receiptId' },
    { case: 'a receipt id of 65 characters', input: { chainId: 8453, wallet, receiptId: 'x'.repeat(65) }, field: 'receiptId' },
  ])('refuses $case', ({ input, field }) => {
    expect(() => receiptKeyValues(input)).toThrow(new RegExp(`no receipt key .*${field}`));
  });
});

describe('receipt key derivation', () => {
  // Pinned: a deposit address handed out must stay the receipt's, so any change to the derivation fails here.
  it.each([
    { chainId: 8453, wallet, receiptId: 'order-1001', key: '0x5ed9154132f6916b6ef4c065e0eb9f5623730e06347f15a67a4a10701a47bdf7' },
    { chainId: 84532, wallet, receiptId: 'order-1001', key: '0xf859659e54f9b71dc8aa0c5d7cd40002bc4ad9de746c05d5dc16797c18ceb803' },
    { chainId: 31337, wallet: getAddress(wallet), receiptId: 'r1', key: '0xb110f0ca06ed14e8296e8702521d39e9f0f4c702e4ba8039a407b3601d5402b9' },
  ])('derives $receiptId on chain $chainId as keccak256(abi.encode(version, chainId, wallet, receiptId))', ({ chainId, wallet: shop, receiptId, key }) => {
    const encoded = AbiCoder.defaultAbiCoder().encode(['string', 'uint256', 'address', 'string'], ['receipt-deposit-v1', chainId, shop, receiptId]);
    expect(receiptKey({ chainId, wallet: shop, receiptId })).toBe(keccak256(encoded));
    expect(receiptKey({ chainId, wallet: shop, receiptId })).toBe(key);
  });

  it('gives every receipt, shop and chain a key of its own, whatever the wallet case', () => {
    const base = { chainId: 8453, wallet, receiptId: 'order-1001' };
    const keys = [
      base,
      { ...base, chainId: 84532 },
      { ...base, wallet: otherWallet },
      { ...base, receiptId: 'order-1002' },
      // Receipt ids are case-sensitive: another case is another receipt.
      { ...base, receiptId: 'ORDER-1001' },
    ].map(receiptKey);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(receiptKey({ ...base, wallet: getAddress(wallet) })).toBe(keys[0]);
  });
});

describe('deposit address (off chain)', () => {
  const factory = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
  const split = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';
  const key = receiptKey({ chainId: 31337, wallet, receiptId: 'r1' });

  it('is the CREATE2 address of the ERC-1167 clone of the implementation, salted with abi.encode(split, receiptKey)', () => {
    const implementation = forwarderImplementation(factory);
    expect(implementation).toBe(getCreateAddress({ from: factory, nonce: 1 }).toLowerCase());
    const salt = keccak256(AbiCoder.defaultAbiCoder().encode(['address', 'bytes32'], [split, key]));
    const initCode = `0x3d602d80600a3d3981f3363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91602b57fd5bf3`;
    // The CREATE2 rule written out: keccak256(0xff ‖ factory ‖ salt ‖ keccak256(init code)), its last 20 bytes.
    const expected = `0x${keccak256(concat(['0xff', factory, salt, keccak256(initCode)])).slice(-40)}`;
    expect(depositAddress({ factory, implementation, split, receiptKey: key })).toBe(expected);
    expect(depositAddress({ factory: getAddress(factory), implementation: getAddress(implementation), split: getAddress(split), receiptKey: key })).toBe(expected);
  });

  it('differs for another split, another receipt, another factory', () => {
    const implementation = forwarderImplementation(factory);
    const of = (input: Partial<Parameters<typeof depositAddress>[0]>) => depositAddress({ factory, implementation, split, receiptKey: key, ...input });
    const addresses = [of({}), of({ split: otherWallet }), of({ receiptKey: receiptKey({ chainId: 31337, wallet, receiptId: 'r2' }) }), of({ factory: otherWallet })];
    expect(new Set(addresses).size).toBe(addresses.length);
  });

  it('refuses the zero split, as the factory does, and a key that is not 32 bytes', () => {
    const implementation = forwarderImplementation(factory);
    expect(() => depositAddress({ factory, implementation, split: `0x${'0'.repeat(40)}`, receiptKey: key })).toThrow(/zero split/);
    expect(() => depositAddress({ factory, implementation, split, receiptKey: key.slice(0, 64) })).toThrow(/32 bytes/);
    expect(() => depositAddress({ factory, implementation, split: '0x1234', receiptKey: key })).toThrow();
  });
});
