/**
 * The console script's pure parts, checked against the libraries the service itself trusts: Keccak-256
 * and EIP-55 against ethers, the factory's and the split's calls against ethers' ABI encoding, and
 * the sign-in message against the service's own EIP-4361 verifier.
 */
import { Interface, Wallet, getAddress, keccak256 as ethersKeccak, toUtf8String } from 'ethers';
import { describe, expect, it } from 'vitest';
import { siweVerifier } from '../../shared/adapters/siwe/verifier';
import { checkSignIn } from '../../shared/domain/session';
import { priceOrder } from '../../shared/domain/pricing';
import { rateToPpm } from '../../shared/domain/tax-catalog';
import { feeExample } from '../../web/admin/fees';
import { checksumAddress, createSplitCalldata, distributeCalldata, selectorOf, signInMessage, toQuantity, utf8Hex } from '../../web/admin/eth';
import { keccak256, toHex } from '../../web/admin/keccak';

const factory = new Interface(['function createSplit(address[] payees, uint16[] bps) returns (address)', 'function distribute(address token)']);

describe('Keccak-256', () => {
  it('matches ethers on every length around the 136-byte block', () => {
    for (const length of [0, 1, 31, 32, 55, 135, 136, 137, 271, 272, 273, 1_000]) {
      const bytes = Uint8Array.from({ length }, (_, index) => (index * 131 + length) & 0xff);
      expect(`0x${toHex(keccak256(bytes))}`, `${length} bytes`).toBe(ethersKeccak(bytes));
    }
  });
});

describe('addresses and calls', () => {
  it('writes addresses in EIP-55 case, whatever case they came in', () => {
    for (const wallet of [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()]) {
      expect(checksumAddress(wallet.address.toLowerCase())).toBe(getAddress(wallet.address));
      expect(checksumAddress(wallet.address.toUpperCase().replace('0X', '0x'))).toBe(wallet.address);
    }
    expect(() => checksumAddress('0x1234')).toThrow('not an address');
  });

  it('encodes createSplit and distribute as ethers does', () => {
    const payees = [
      { address: Wallet.createRandom().address.toLowerCase(), bps: 9_850 },
      { address: Wallet.createRandom().address.toLowerCase(), bps: 100 },
      { address: Wallet.createRandom().address.toLowerCase(), bps: 50 },
    ];
    expect(createSplitCalldata(payees)).toBe(factory.encodeFunctionData('createSplit', [payees.map((p) => p.address), payees.map((p) => p.bps)]));
    expect(createSplitCalldata(payees.slice(0, 1))).toBe(factory.encodeFunctionData('createSplit', [[payees[0]!.address], [payees[0]!.bps]]));
    const token = Wallet.createRandom().address;
    expect(distributeCalldata(token)).toBe(factory.encodeFunctionData('distribute', [token]));
    expect(distributeCalldata('0x' + '0'.repeat(40))).toBe(factory.encodeFunctionData('distribute', ['0x' + '0'.repeat(40)]));
    expect(selectorOf('transfer(address,uint256)')).toBe('0xa9059cbb');
    expect(() => createSplitCalldata([])).toThrow('needs payees');
    expect(() => createSplitCalldata([{ address: payees[0]!.address, bps: 70_000 }])).toThrow('bps out of range');
    expect(toQuantity(31_337)).toBe('0x7a69');
  });
});

describe('the sign-in message', () => {
  it('is a message the service accepts: checksummed address, its domain, URI, chain and nonce', async () => {
    const wallet = Wallet.createRandom();
    const now = Date.now();
    const fields = { domain: 'shop.example', uri: 'https://shop.example', chainId: 8453, nonce: 'abcdefgh12345678abcdefgh1', address: wallet.address.toLowerCase(), statement: 'Sign in to the merchant console.', issuedAt: new Date(now) };
    const message = signInMessage(fields);
    expect(message.split('\n')[1]).toBe(wallet.address);
    // personal_sign takes the message as UTF-8 hex.
    expect(toUtf8String(utf8Hex(message))).toBe(message);
    const verified = await siweVerifier.verify(message, await wallet.signMessage(message), now);
    expect(verified).toMatchObject({ address: wallet.address.toLowerCase(), domain: 'shop.example', uri: 'https://shop.example', chainId: 8453, nonce: fields.nonce });
    expect(() => checkSignIn(verified, { domain: 'shop.example', origin: 'https://shop.example', chainId: 8453, now })).not.toThrow();
    // Another wallet's signature does not pass for this address.
    await expect(siweVerifier.verify(message, await Wallet.createRandom().signMessage(message), now)).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('the fee’s worked example', () => {
  it('is what an order of the same items, tax and fee is priced at', () => {
    for (const [itemsCents, taxRate, processingFeePct, feeBps] of [
      [10_000, 0.0725, 2.5, 100],
      [10_000, 0, 0, 0],
      [1_999, 0.08875, 2.9, 250],
      [123_456, 0.21, 10, 0],
      [1, 0.3, 0.01, 300],
    ] as const) {
      const example = feeExample({ itemsCents, taxRate, processingFeePct, feeBps })!;
      const order = priceOrder({ lines: [{ label: 'Items', qty: 1, unitCents: itemsCents, taxable: true }], taxRatePpm: rateToPpm(taxRate), processingFeeHundredths: Math.round(processingFeePct * 100), feeBps });
      expect(example, `${itemsCents} ${taxRate} ${processingFeePct} ${feeBps}`).toMatchObject({ taxCents: order.taxCents, feeCents: order.processingFeeCents, totalCents: order.totalCents });
    }
  });

  it('has none for a fee the service refuses', () => {
    for (const fee of [-1, 10.01, 1.234, Number.NaN]) expect(feeExample({ itemsCents: 100, taxRate: 0, processingFeePct: fee, feeBps: 0 })).toBeNull();
  });
});
