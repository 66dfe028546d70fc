import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, Signature, Wallet, toQuantity, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { call, stackEnv, startStack, stopStack, type StartedStack } from '../support/stack';
import { protocolProof, v2ProofHeader } from '../support/x402';

/**
 * Being paid for nothing, tried on `npm start` over HTTP as an agent would: a payer who spends its
 * own authorization's nonce ahead of the relayer's transaction gets no order, and the transaction of
 * a real x402 order pays no other receipt of the shop when its hash is reported for it.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'money-safety-e2e-'));
let stack: StartedStack;
let provider: JsonRpcProvider;
let credentials: { rpcUrl: string; chainId: number; tokens: { USDC: string } };

beforeAll(async () => {
  stack = await startStack(stackEnv(dataDir));
  credentials = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8'));
  provider = createProvider(credentials.rpcUrl, credentials.chainId);
}, 120_000);
afterAll(async () => {
  provider?.destroy();
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

const ORDER = { shopSlug: 'demo-coffee', items: [{ sku: 'MUG-CERAMIC', qty: 1 }] };
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const usdc = (signer?: Wallet) => new Contract(credentials.tokens.USDC, testUsdcArtifact.abi, signer ?? provider);

/** A fresh payer with gas and 100 test USDC (the test token's mint is open). */
const newPayer = async () => {
  const payer = new Wallet(Wallet.createRandom().privateKey, provider);
  await provider.send('anvil_setBalance', [payer.address, toQuantity(10n ** 19n)]);
  await (await usdc(payer).getFunction('mint')(payer.address, 100_000_000n)).wait();
  return payer;
};

/** The order's challenge and a v2 proof for it, made by the protocol's own client. */
const proofFor = async (payer: Wallet) => {
  const challenge = await post('/api/x402/orders', ORDER);
  expect(challenge.status).toBe(402);
  const payload = await protocolProof(payer.privateKey, challenge.headers.get('PAYMENT-REQUIRED')!);
  return { payload, header: v2ProofHeader(payload) };
};

const pending = async () => ((await provider.send('eth_getBlockByNumber', ['pending', false])) as { transactions: string[] }).transactions;

describe('x402 on the local stack', () => {
  it('a nonce the payer cancels ahead of the relayer’s transaction (same block, higher fee) is no payment: 402 nonce_used, no receipt, nothing in the split', async () => {
    const payer = await newPayer();
    const { payload, header } = await proofFor(payer);
    const { authorization } = payload.payload as { authorization: { nonce: string; to: string } };
    const split = authorization.to;
    const splitBefore = (await usdc().getFunction('balanceOf')(split)) as bigint;
    const payerBefore = (await usdc().getFunction('balanceOf')(payer.address)) as bigint;

    await provider.send('evm_setAutomine', [false]);
    let answer: Response;
    try {
      const before = new Set(await pending());
      const paying = post('/api/x402/orders', ORDER, header);
      // The relayer's transaction waits in the pool; the payer's cancellation overtakes it by its fee.
      let relayed: string | undefined;
      for (const until = Date.now() + 20_000; !relayed && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 25))) {
        relayed = (await pending()).find((hash) => !before.has(hash));
      }
      expect(relayed, 'the relayer sent its transaction').toBeDefined();
      const domain = { name: 'USD Coin', version: '2', chainId: credentials.chainId, verifyingContract: credentials.tokens.USDC };
      const types = { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] };
      const { v, r, s } = Signature.from(await payer.signTypedData(domain, types, { authorizer: payer.address, nonce: authorization.nonce }));
      const cancel = await usdc(payer).getFunction('cancelAuthorization')(payer.address, authorization.nonce, v, r, s, { maxPriorityFeePerGas: 50n * 10n ** 9n, maxFeePerGas: 100n * 10n ** 9n, gasLimit: 200_000n });
      await provider.send('evm_mine', []);
      const [cancelled, relayer] = await Promise.all([provider.getTransactionReceipt(cancel.hash), provider.getTransactionReceipt(relayed!)]);
      expect(cancelled!.blockNumber).toBe(relayer!.blockNumber);
      expect(relayer!.status).toBe(0);
      answer = await paying;
    } finally {
      await provider.send('evm_setAutomine', [true]);
    }
    expect(answer.status).toBe(402);
    expect(await answer.json()).toMatchObject({ error: 'nonce_used' });
    expect((await usdc().getFunction('balanceOf')(split)) as bigint).toBe(splitBefore);
    expect((await usdc().getFunction('balanceOf')(payer.address)) as bigint).toBe(payerBefore);
    // Sent again, the proof is still refused.
    const again = await post('/api/x402/orders', ORDER, header);
    expect(again.status).toBe(402);
    expect(await again.json()).toMatchObject({ error: 'nonce_used' });
    // No receipt was paid by it.
    const receipts = (await call(stack.baseUrl, '/api/receipts?status=paid&limit=100', { key: stack.apiKey })).json as { receipts: Array<{ buyerWallet: string | null }> };
    expect(receipts.receipts.filter((receipt) => receipt.buyerWallet?.toLowerCase() === payer.address.toLowerCase())).toEqual([]);
  }, 90_000);

  it('one fresh proof sent 20 times at once: one payment, and every answer is that payment’s 200 or a 409, never a 5xx', async () => {
    const payer = await newPayer();
    const { header } = await proofFor(payer);
    const before = (await usdc().getFunction('balanceOf')(payer.address)) as bigint;
    const answers = await Promise.all(Array.from({ length: 20 }, async () => {
      const response = await post('/api/x402/orders', ORDER, header);
      return { status: response.status, body: (await response.json()) as { receipt?: { receiptId: string } } };
    }));
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 409), JSON.stringify(answers.filter((answer) => answer.status >= 500))).toEqual([]);
    expect(new Set(answers.filter((answer) => answer.status === 200).map((answer) => answer.body.receipt?.receiptId)).size).toBeLessThanOrEqual(1);
    // Afterwards the proof answers its one order.
    const again = await post('/api/x402/orders', ORDER, header);
    expect(again.status).toBe(200);
    const spent = before - ((await usdc().getFunction('balanceOf')(payer.address)) as bigint);
    expect(spent).toBeGreaterThan(0n);
    const paidOnce = (await again.json()) as { receipt: { totalUsd: number } };
    expect(spent).toBe(BigInt(Math.round(paidOnce.receipt.totalUsd * 100)) * 10_000n);
  }, 90_000);

  it('a settled order’s transaction reported for another receipt of the shop: 400 not_a_payment (it went to the split, not that receipt’s address), and that receipt stays unpaid', async () => {
    const payer = await newPayer();
    const { header } = await proofFor(payer);
    const paid = await post('/api/x402/orders', ORDER, header);
    expect(paid.status).toBe(200);
    const { receipt } = (await paid.json()) as { receipt: { receiptId: string; transactionHash: string; totalUsd: number } };
    expect((await call(stack.baseUrl, `/api/receipts/${receipt.receiptId}`, { key: stack.apiKey })).json).toMatchObject({ status: expect.stringMatching(/^(paid|reconciled)$/), transactionHash: receipt.transactionHash });

    // A receipt for less than the order, quoted in USDC: the settlement's transfer to the split would cover its amount, at the wrong address.
    const id = `stolen-${Date.now()}`;
    const created = await call(stack.baseUrl, '/api/receipts', { method: 'POST', key: stack.apiKey, body: { id, lineItems: [{ label: 'Sticker', priceUsd: 1 }], totalUsd: 1 } });
    expect(created.status).toBe(201);
    expect((await call(stack.baseUrl, `/api/portal/${id}/quote`, { method: 'POST', body: { token: 'USDC' } })).status).toBe(200);
    const reported = await call(stack.baseUrl, `/api/portal/${id}/payments`, { method: 'POST', body: { txHash: receipt.transactionHash } });
    expect(reported.status).toBe(400);
    expect(reported.json).toMatchObject({ error: 'not_a_payment' });
    expect((await call(stack.baseUrl, `/api/receipts/${id}`, { key: stack.apiKey })).json).toMatchObject({ status: 'pending' });
  }, 60_000);
});
