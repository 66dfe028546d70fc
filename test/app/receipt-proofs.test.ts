import { TypedDataEncoder, Wallet, verifyTypedData } from 'ethers';
import { beforeEach, describe, expect, it } from 'vitest';
import { unavailableReceiptSigner } from '../../shared/adapters/evm/lazy-receipt-signer';
import type { AppDeps } from '../../shared/app/deps';
import { getPortalReceiptProof, getReceiptProof, receiptSignerInfo } from '../../shared/app/receipt-proofs';
import { changeStatus } from '../../shared/app/receipt-status';
import { createReceipt } from '../../shared/app/receipts';
import { DEVELOPMENT_RECEIPT_SIGNING_KEY, memoryDeps } from '../../shared/composition';
import { proofLine, receiptProofTypes, type ReceiptProof } from '../../shared/domain/receipt-proof';
import { tickingClock } from '../support/fixtures';
import { BUYER, SPLIT, USDC, payReceipt, proofLines } from '../support/paid-receipts';
import { wallets } from '../support/stores';

let deps: AppDeps;
beforeEach(() => {
  deps = memoryDeps({ clock: tickingClock() });
});

const recover = (proof: Pick<ReceiptProof, 'domain' | 'types' | 'message' | 'signature'>) => verifyTypedData(proof.domain, proof.types, proof.message, proof.signature);
const stored = async (id: string, wallet = wallets.alice) => (await deps.receipts.get(wallet, id))!.value;

/** Another value of the same EIP-712 type. */
const changed = (type: string, value: unknown): unknown => {
  if (type === 'string') return `${String(value)}x`;
  if (type === 'address') return String(value).toLowerCase() === BUYER ? SPLIT : BUYER;
  if (type === 'uint256') return typeof value === 'number' ? value + 1 : (BigInt(value as string) + 1n).toString();
  if (type === 'bytes32') return '0x' + (String(value).slice(2, 4) === 'ee' ? 'dd' : 'ee').repeat(32);
  throw new Error(`no change for ${type}`);
};

describe('receipt proofs', () => {
  it('a paid receipt carries its proof from the paid change itself, verifiable against the published signer', async () => {
    const outcome = await payReceipt(deps, wallets.alice, 'order-1');
    const proof = (await stored('order-1')).proof!;
    expect(outcome.receipt.proof).toEqual(proof);
    const signer = await receiptSignerInfo(deps);
    expect(signer).toEqual({ address: new Wallet(DEVELOPMENT_RECEIPT_SIGNING_KEY).address, chainId: deps.settings.chainId, domain: proof.domain, retired: [] });
    expect(proof.signer).toBe(signer.address);
    expect(recover(proof)).toBe(signer.address);
    expect(proof).toMatchObject({
      domain: { name: deps.settings.brandName, version: '1', chainId: deps.settings.chainId },
      primaryType: 'Receipt',
      message: {
        receiptId: 'order-1',
        merchant: wallets.alice,
        currency: 'USD',
        totalCents: Math.round((await stored('order-1')).customerTotalUsd * 100),
        token: 'USDC',
        tokenAddress: USDC,
        amount: '51250000',
        payer: BUYER,
        payTo: SPLIT,
        chainId: deps.settings.chainId,
        transactionHash: '0x' + 'ab'.repeat(32),
        paidAt: (await stored('order-1')).paidAt,
      },
    });
    expect(Object.keys(proof.types)).toEqual(['Receipt', 'Line']);
    // The same document from both routes, and no new signature: it is the stored one.
    expect(await getReceiptProof(deps, wallets.alice, 'order-1')).toEqual(proof);
    expect(await getPortalReceiptProof(deps, 'order-1')).toEqual(proof);
  });

  it('any change to any field of the message, or of a line, breaks the signature', async () => {
    await payReceipt(deps, wallets.alice, 'order-2');
    const proof = await getReceiptProof(deps, wallets.alice, 'order-2');
    const fields = receiptProofTypes.Receipt.filter((field) => field.name !== 'lines');
    expect(fields.map((field) => field.name).sort()).toEqual(Object.keys(proof.message).filter((name) => name !== 'lines').sort());
    for (const { name, type } of fields) {
      const message = { ...proof.message, [name]: changed(type, proof.message[name as keyof typeof proof.message]) };
      expect(recover({ ...proof, message }), name).not.toBe(proof.signer);
    }
    for (const [index, line] of proof.message.lines.entries()) {
      for (const { name, type } of receiptProofTypes.Line) {
        const lines = proof.message.lines.map((each, at) => (at === index ? { ...each, [name]: changed(type, line[name as keyof typeof line]) } : each));
        expect(recover({ ...proof, message: { ...proof.message, lines } }), `lines[${index}].${name}`).not.toBe(proof.signer);
      }
    }
    // A line dropped, or the lines reordered; and another domain.
    expect(recover({ ...proof, message: { ...proof.message, lines: proof.message.lines.slice(1) } })).not.toBe(proof.signer);
    expect(recover({ ...proof, message: { ...proof.message, lines: [...proof.message.lines].reverse() } })).not.toBe(proof.signer);
    for (const domain of [{ ...proof.domain, chainId: 1 }, { ...proof.domain, name: 'Other' }, { ...proof.domain, version: '2' }]) {
      expect(recover({ ...proof, domain })).not.toBe(proof.signer);
    }
    expect(recover(proof)).toBe(proof.signer);
  });

  it('the lines are recomputed from the receipt’s lineItems: the same EIP-712 hash of Line[]', async () => {
    await payReceipt(deps, wallets.alice, 'order-3');
    const receipt = await stored('order-3');
    const proof = receipt.proof!;
    expect(receipt.lineItems.map(proofLine)).toEqual(proof.message.lines);
    expect(proof.message.lines).toEqual([
      { label: 'Ceramic mug', sku: 'MUG-CERAMIC', qty: 2, unitPriceCents: 0, priceCents: 2400 },
      { label: 'Gift card, 25 USD', sku: '', qty: 0, unitPriceCents: 0, priceCents: 2500 },
      { label: 'Tax', sku: '', qty: 0, unitPriceCents: 0, priceCents: 174 },
    ]);
    const hashOf = (lines: unknown[]) => TypedDataEncoder.from({ Line: proof.types.Line }).encodeData('Line[]', lines);
    expect(hashOf(proofLines.map(proofLine))).toBe(hashOf(proof.message.lines));
    expect(hashOf(proofLines.map((line) => proofLine({ ...line, priceUsd: line.priceUsd + 0.01 })))).not.toBe(hashOf(proof.message.lines));
  });

  it('only a paid receipt has one: 409 receipt_not_paid before, for the merchant and the buyer', async () => {
    await createReceipt(deps, { wallet: wallets.alice, subscriptionId: null }, { id: 'open-1', lineItems: proofLines, totalUsd: 50.74 });
    for (const status of ['pending', 'link_opened', 'checkout_success'] as const) {
      if (status !== 'pending') await changeStatus(deps, { wallet: wallets.alice, receiptId: 'open-1', status, actor: 'portal' });
      await expect(getReceiptProof(deps, wallets.alice, 'open-1')).rejects.toMatchObject({ code: 'receipt_not_paid', details: { status } });
      await expect(getPortalReceiptProof(deps, 'open-1')).rejects.toMatchObject({ code: 'receipt_not_paid' });
    }
    await changeStatus(deps, { wallet: wallets.alice, receiptId: 'open-1', status: 'failed', actor: 'service', failure: { code: 'PORTAL_SESSION_EXPIRED' } });
    await expect(getPortalReceiptProof(deps, 'open-1')).rejects.toMatchObject({ code: 'receipt_not_paid', details: { status: 'failed' } });
    expect((await stored('open-1')).proof).toBeUndefined();
  });

  it('another merchant’s receipt, an unknown id or a malformed one is not found', async () => {
    await payReceipt(deps, wallets.alice, 'order-4');
    await expect(getReceiptProof(deps, wallets.bob, 'order-4')).rejects.toMatchObject({ code: 'not_found' });
    await expect(getReceiptProof(deps, wallets.alice, 'nope')).rejects.toMatchObject({ code: 'not_found' });
    await expect(getReceiptProof(deps, wallets.alice, 'bad id!')).rejects.toMatchObject({ code: 'not_found' });
    await expect(getPortalReceiptProof(deps, 'nope')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a receipt paid before proofs existed gets one on its first request, kept from then on', async () => {
    await payReceipt(deps, wallets.alice, 'old-1');
    const original = (await deps.receipts.get(wallets.alice, 'old-1'))!;
    const { proof: _signed, ...before } = original.value;
    await deps.receipts.replace(wallets.alice, before, original.etag);
    expect((await stored('old-1')).proof).toBeUndefined();

    const lazy = await getPortalReceiptProof(deps, 'old-1');
    expect(recover(lazy)).toBe(lazy.signer);
    const after = await stored('old-1');
    expect(after.proof).toEqual(lazy);
    expect(after.updatedAt).toBe(original.value.updatedAt);
    expect(await getReceiptProof(deps, wallets.alice, 'old-1')).toEqual(lazy);
  });

  it('the payment never waits on the signer: paid without a proof, which the first request makes once a key signs', async () => {
    const unsigned = { ...deps, receiptSigner: unavailableReceiptSigner('no key here') };
    const outcome = await payReceipt(unsigned, wallets.alice, 'later-1');
    expect(outcome.receipt.status).toBe('paid');
    expect((await stored('later-1')).proof).toBeNull();
    await expect(getReceiptProof(unsigned, wallets.alice, 'later-1')).rejects.toMatchObject({ name: 'DependencyUnavailableError' });
    await expect(receiptSignerInfo(unsigned)).rejects.toMatchObject({ name: 'DependencyUnavailableError' });

    const proof = await getReceiptProof(deps, wallets.alice, 'later-1');
    expect(recover(proof)).toBe(proof.signer);
    expect((await stored('later-1')).proof).toEqual(proof);
  });

  it('a key that signed a proof keeps it: the stored proof is answered as it was signed, not signed again', async () => {
    await payReceipt(deps, wallets.alice, 'kept-1');
    const first = await getReceiptProof(deps, wallets.alice, 'kept-1');
    const otherKey = { ...deps, receiptSigner: unavailableReceiptSigner('rotated away') };
    expect(await getReceiptProof(otherKey, wallets.alice, 'kept-1')).toEqual(first);
  });
});
