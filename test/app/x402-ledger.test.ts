/**
 * An x402 order's settlement in the payment ledger, on the run's chain with a real split: its
 * transaction is claimed for the order's receipt, so reported for another receipt of the shop it
 * pays nothing there, and the receipt records the block it was mined in (reconciliation counts
 * only distributions after it).
 */
import { createHash } from 'node:crypto';
import { Wallet, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { quoteFor } from '../../shared/app/payments/portal';
import { verifyPayment } from '../../shared/app/payments/verify';
import { createReceipt } from '../../shared/app/receipts';
import { x402Order } from '../../shared/app/x402/orders';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import { slugClaimId } from '../../shared/domain/shop';
import { newReceiptId } from '../../shared/domain/receipt';
import { paymentProofClaimId } from '../../shared/domain/x402';
import type { PaymentSettler } from '../../shared/ports/payment-settler';
import { merchantWithSplit, testAccounts } from '../support/chain-merchant';
import { payingDepsWithX402, protocolProof, v2ProofHeader } from '../support/x402';

const local = inject('chain');
let provider: JsonRpcProvider;
let chain: EvmChain;
let deps: AppDeps;
let accounts: Awaited<ReturnType<typeof testAccounts>>;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  accounts = await testAccounts(provider);
  ({ chain, deps } = await payingDepsWithX402(() => accounts.newWallet()));
});
afterAll(() => {
  chain?.destroy();
  provider?.destroy();
});

/** A shop on the run's chain with its split, a slug and an item priced 5.00; an order body for it. */
const shop = async () => {
  const { merchant, split } = await merchantWithSplit(deps, chain);
  const slug = `ledger-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: Date.now() });
  await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'MUG', name: 'A mug', priceUsd: 5, stockQty: 3 }));
  return { merchant, split, body: { shopSlug: slug, items: [{ sku: 'MUG', qty: 1 }] } };
};

/** A pending receipt of `merchant` for `usd`, quoted in USDC (to the shop's split). */
const quotedReceipt = async (merchant: string, usd: number) => {
  const id = `ledger-other-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems: [{ label: 'Tea', priceUsd: usd }], totalUsd: usd });
  await quoteFor(deps, id, 'USDC');
  return id;
};

describe('an x402 order in the payment ledger', () => {
  it('its settlement reported for another receipt of the shop the moment it is mined, before the gate claims it: refused there (it paid the split, not that receipt’s address), and the order is paid', async () => {
    const { merchant, body } = await shop();
    const other = await quotedReceipt(merchant, 4);
    let reported: unknown;
    const racing: PaymentSettler = {
      verify: (payload, requirements) => deps.settler.verify(payload, requirements),
      settle: async (payload, requirements) => {
        const settled = await deps.settler.settle(payload, requirements);
        // Anyone watching the chain reports the transfer to the split for a receipt of their own first.
        reported = await verifyPayment(deps, other, settled.transaction).catch((error: unknown) => error);
        return settled;
      },
    };
    const racingDeps = { ...deps, settler: racing };
    const challenge = await x402Order(racingDeps, new Headers(), body);
    const payer = await accounts.newWallet([local.usdc]);
    const proof = await protocolProof(payer.privateKey, challenge.headers['PAYMENT-REQUIRED']!);
    const paid = await x402Order(racingDeps, new Headers(v2ProofHeader(proof)), body);
    expect(paid.status).toBe(200);
    expect(reported).toMatchObject({ code: 'not_a_payment' });
    expect((await deps.receipts.get(merchant, other))!.value).toMatchObject({ status: 'pending' });
  });

  it('its receipt id cannot be computed from the chain: a receipt made first under the id the payer and nonce would give does not stop the order', async () => {
    const { body } = await shop();
    const challenge = await x402Order(deps, new Headers(), body);
    const payer = await accounts.newWallet([local.usdc]);
    const proof = await protocolProof(payer.privateKey, challenge.headers['PAYMENT-REQUIRED']!);
    const { from, nonce } = (proof.payload as unknown as { authorization: { from: string; nonce: string } }).authorization;
    // What anyone who reads the settlement's AuthorizationUsed log can compute, taken by a wallet of their own.
    const guessable = newReceiptId(createHash('sha256').update(paymentProofClaimId(local.chainId, local.usdc, from, nonce)).digest('hex').slice(0, 16));
    const squatter = Wallet.createRandom().address.toLowerCase();
    await createReceipt(deps, { wallet: squatter, subscriptionId: null }, { id: guessable, lineItems: [{ label: 'Mine', priceUsd: 1 }], totalUsd: 1 });
    const paid = await x402Order(deps, new Headers(v2ProofHeader(proof)), body);
    expect(paid.status).toBe(200);
    expect((paid.body as { receipt: { receiptId: string } }).receipt.receiptId).not.toBe(guessable);
  });

  it('its transaction pays its own receipt, at its real block; reported for another receipt of the shop it pays nothing there', async () => {
    const { merchant, split } = await merchantWithSplit(deps, chain);
    const slug = `ledger-${Date.now()}`;
    await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: Date.now() });
    await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'MUG', name: 'A mug', priceUsd: 5, stockQty: 3 }));
    const body = { shopSlug: slug, items: [{ sku: 'MUG', qty: 1 }] };
    const challenge = await x402Order(deps, new Headers(), body);
    const payer = await accounts.newWallet([local.usdc]);
    const proof = await protocolProof(payer.privateKey, challenge.headers['PAYMENT-REQUIRED']!);
    const paid = await x402Order(deps, new Headers(v2ProofHeader(proof)), body);
    expect(paid.status).toBe(200);
    const { receiptId, transactionHash } = (paid.body as { receipt: { receiptId: string; transactionHash: string } }).receipt;
    const mined = await provider.getTransactionReceipt(transactionHash);
    const order = (await deps.receipts.get(merchant, receiptId))!.value;
    expect(order.payments).toEqual([expect.objectContaining({ txHash: transactionHash, outcome: 'paid', blockNumber: mined!.blockNumber })]);
    expect(mined!.blockNumber).toBeGreaterThan(0);

    // Another receipt of the shop, for less: the settlement's transfer to the split would cover it, but it did not go to that receipt's address.
    const other = `ledger-other-${Date.now()}`;
    await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id: other, lineItems: [{ label: 'Tea', priceUsd: 4 }], totalUsd: 4 });
    const quote = await quoteFor(deps, other, 'USDC');
    expect(quote.payTo).not.toBe(split);
    await expect(verifyPayment(deps, other, transactionHash)).rejects.toMatchObject({ code: 'not_a_payment' });
    expect((await deps.receipts.get(merchant, other))!.value).toMatchObject({ status: 'pending' });
    expect((await deps.receipts.get(merchant, other))!.value.payments ?? []).toEqual([]);
    // Its own receipt, asked again by hash: recorded already.
    expect(await verifyPayment(deps, receiptId, transactionHash)).toMatchObject({ outcome: 'already_recorded', recorded: 'paid' });
  });
});
