/**
 * Every payment of a receipt in its API view (`GET /api/receipts/{id}`), on the run's chain through
 * the real EVM adapter: an underpayment and the top-up that pays it, a reverted payment and the
 * payment after it, an x402 order's settlement. Each entry is what the service recorded when it
 * judged the transaction; the list of receipts carries none of them.
 */
import { Contract, Wallet, parseEther, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { quoteFor } from '../../shared/app/payments/portal';
import { verifyPayment } from '../../shared/app/payments/verify';
import { createReceipt } from '../../shared/app/receipts';
import { x402Order } from '../../shared/app/x402/orders';
import { setDeps } from '../../shared/composition';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import type { ReceiptDetailView } from '../../shared/domain/receipt-views';
import { slugClaimId } from '../../shared/domain/shop';
import { routes } from '../../shared/http/routes';
import { merchantWithSplit, testAccounts } from '../support/chain-merchant';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { payingDepsWithX402, protocolProof, v2ProofHeader } from '../support/x402';

const local = inject('chain');
let provider: JsonRpcProvider;
let chain: EvmChain;
let deps: AppDeps;
let accounts: Awaited<ReturnType<typeof testAccounts>>;
let merchant: string;
let key: Merchant;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  accounts = await testAccounts(provider);
  ({ chain, deps } = await payingDepsWithX402(() => accounts.newWallet()));
  setDeps(deps);
  ({ merchant } = await merchantWithSplit(deps, chain));
  key = await addMerchant(deps, merchant);
});
afterAll(() => {
  chain?.destroy();
  provider?.destroy();
});

const asMerchant = () => ({ 'x-subscription-id': key.subscriptionId });

/** The receipt as `GET /api/receipts/{id}` answers it, checked against the route's response schema (no field more or less). */
const viewOf = async (id: string): Promise<ReceiptDetailView> => {
  const answer = await invoke('receipts-get', { path: `/api/receipts/${encodeURIComponent(id)}`, headers: asMerchant() });
  expect(answer.status).toBe(200);
  expect(routes.receiptsGet.response.parse(answer.json)).toEqual(answer.json);
  return answer.json as unknown as ReceiptDetailView;
};

let serial = 0;
const newReceipt = async (totalUsd = 52.02) => {
  const id = `payments-view-${++serial}-${Date.now()}`;
  await createReceipt(deps, { wallet: merchant, subscriptionId: key.subscriptionId }, { id, lineItems: [{ label: 'Beans', priceUsd: totalUsd }], totalUsd });
  return id;
};

const erc20 = (address: string, signer: Wallet) => new Contract(address, testUsdcArtifact.abi, signer);
const blockOf = async (hash: string) => (await provider.getTransactionReceipt(hash))!.blockNumber;

describe('a receipt’s payments in its API view', () => {
  it('an underpayment and the top-up that pays it are both listed, each with its hash, payer, token, amount and decimals, block, outcome and time; the view names the deposit address', async () => {
    const id = await newReceipt();
    // No quote yet: no deposit address either.
    expect(await viewOf(id)).toMatchObject({ payments: [], depositAddress: null });
    const buyer = await accounts.newWallet([local.usdt]);
    const quote = await quoteFor(deps, id, 'USDT');
    // The receipt's own address, fixed at its first quote: where each of its payments below went.
    expect((await viewOf(id)).depositAddress).toBe(quote.payTo);
    const short = BigInt(quote.amount) - 1_000_000n;
    const before = Date.now();
    const first = (await (await erc20(quote.tokenAddress!, buyer).getFunction('transfer')(quote.payTo, short)).wait()).hash as string;
    expect(await verifyPayment(deps, id, first)).toMatchObject({ outcome: 'underpaid', status: 'pending' });
    const second = (await (await erc20(quote.tokenAddress!, buyer).getFunction('transfer')(quote.payTo, 1_000_000n)).wait()).hash as string;
    expect(await verifyPayment(deps, id, second)).toMatchObject({ outcome: 'paid', status: 'paid' });

    const view = await viewOf(id);
    const payer = buyer.address.toLowerCase();
    expect(view.payments).toEqual([
      { transactionHash: first, judgedBy: 'transaction', payer, token: 'USDT', amount: short.toString(), decimals: 6, expected: quote.amount, blockNumber: await blockOf(first), outcome: 'underpaid', recordedAt: expect.any(Number) },
      { transactionHash: second, judgedBy: 'transaction', payer, token: 'USDT', amount: '1000000', decimals: 6, expected: quote.amount, blockNumber: await blockOf(second), outcome: 'paid', recordedAt: expect.any(Number) },
    ]);
    expect(view.payments[0]!.blockNumber).toBeLessThan(view.payments[1]!.blockNumber);
    for (const payment of view.payments) expect(payment.recordedAt).toBeGreaterThanOrEqual(before);
    // The receipt's own fields name the transaction that paid it, and the sum.
    expect(view).toMatchObject({ transactionHash: second, token: 'USDT', amountPaid: quote.amount });

    // The list keeps its summary and carries no payments (a receipt's records are not bounded).
    const listed = await invoke('receipts-list', { path: '/api/receipts?limit=200', headers: asMerchant() });
    const entry = (listed.json.receipts as Array<Record<string, unknown>>).find((receipt) => receipt.receiptId === id)!;
    expect(entry).toMatchObject({ transactionHash: second, amountPaid: quote.amount });
    expect(entry).not.toHaveProperty('payments');
  });

  it('a stranger’s reverted payment is listed as reverted, with nothing moved and nothing failed, and the payment after it as paid', async () => {
    const id = await newReceipt(12);
    const quote = await quoteFor(deps, id, 'USDC');
    // A transfer from a wallet that holds no USDC: mined, and reverted (a fixed gas limit, so it is not refused).
    const poor = new Wallet(Wallet.createRandom().privateKey, provider);
    await provider.send('anvil_setBalance', [poor.address, '0x' + parseEther('1').toString(16)]);
    const sent = await erc20(quote.tokenAddress!, poor).getFunction('transfer')(quote.payTo, BigInt(quote.amount), { gasLimit: 100_000 });
    await sent.wait().catch(() => undefined);
    const reverted = sent.hash as string;
    expect(await verifyPayment(deps, id, reverted)).toMatchObject({ outcome: 'reverted', status: 'pending' });
    expect((await viewOf(id)).payments).toEqual([
      { transactionHash: reverted, judgedBy: 'transaction', payer: poor.address.toLowerCase(), token: null, amount: '0', decimals: null, expected: null, blockNumber: await blockOf(reverted), outcome: 'reverted', recordedAt: expect.any(Number) },
    ]);

    const buyer = await accounts.newWallet([local.usdc]);
    const paid = (await (await erc20(quote.tokenAddress!, buyer).getFunction('transfer')(quote.payTo, BigInt(quote.amount))).wait()).hash as string;
    expect(await verifyPayment(deps, id, paid)).toMatchObject({ outcome: 'paid', status: 'paid' });
    const view = await viewOf(id);
    expect(view.payments.map((payment) => [payment.transactionHash, payment.outcome, payment.token, payment.amount])).toEqual([
      [reverted, 'reverted', null, '0'],
      [paid, 'paid', 'USDC', quote.amount],
    ]);
  });

  it('an x402 order lists its settlement: the transaction, its payer, the USDC it brought and the block it was mined in', async () => {
    const slug = `payments-view-${Date.now()}`;
    await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: Date.now() });
    await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'MUG', name: 'A mug', priceUsd: 5, stockQty: 3 }));
    const body = { shopSlug: slug, items: [{ sku: 'MUG', qty: 1 }] };
    const challenge = await x402Order(deps, new Headers(), body);
    const payer = await accounts.newWallet([local.usdc]);
    const proof = await protocolProof(payer.privateKey, challenge.headers['PAYMENT-REQUIRED']!);
    const paid = await x402Order(deps, new Headers(v2ProofHeader(proof)), body);
    expect(paid.status).toBe(200);
    const { receiptId, transactionHash } = (paid.body as { receipt: { receiptId: string; transactionHash: string } }).receipt;

    const view = await viewOf(receiptId);
    const mined = await blockOf(transactionHash);
    expect(mined).toBeGreaterThan(0);
    expect(view.amountPaid).toMatch(/^[1-9]\d*$/);
    // Settled straight to the split: the receipt has no deposit address.
    expect(view.depositAddress).toBeNull();
    expect(view.payments).toEqual([
      { transactionHash, judgedBy: 'transaction', payer: payer.address.toLowerCase(), token: 'USDC', amount: view.amountPaid, decimals: 6, expected: view.amountPaid, blockNumber: mined, outcome: 'paid', recordedAt: expect.any(Number) },
    ]);
  });
});
