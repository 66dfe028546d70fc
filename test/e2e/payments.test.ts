import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, Wallet, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import { setEthUsdPrice, setFeedUpdatedAt } from '../../scripts/local/feed';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { startReceiver } from '../support/receiver';
import { call, signedInPost, stackEnv, startStack, stopStack, waitFor, type StartedStack } from '../support/stack';

/**
 * Buyers paying on `npm start`, over HTTP, on its anvil chain: quote, pay from a funded test account,
 * report the hash (or not: the watcher), and the receipt becomes paid with a signed webhook.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'payments-e2e-'));
let stack: StartedStack;
let provider: JsonRpcProvider;
let credentials: { rpcUrl: string; chainId: number; tokens: { USDC: string; USDT: string }; ethUsdFeed: string; buyers: string[]; wallet: string };

interface Quote {
  token: string;
  tokenAddress: string | null;
  payTo: string;
  amount: string;
  expiresAt: number;
}

beforeAll(async () => {
  // Receipts expire after 20 s here, so expiry is seen within the test (the timer runs every 30 s).
  stack = await startStack(stackEnv(dataDir, { RECEIPT_EXPIRY_SECONDS: '20' }));
  credentials = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8'));
  provider = createProvider(credentials.rpcUrl, credentials.chainId);
}, 120_000);
afterAll(async () => {
  provider?.destroy();
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Buyer N (1–5): anvil accounts 5–9, funded with test USDC and USDT by the stack. */
const buyer = (n: number) => new Wallet(ANVIL_ACCOUNTS[4 + n]!.privateKey, provider);

const api = (path: string, init: { method?: string; body?: unknown } = {}) => call(stack.baseUrl, path, { ...init, key: stack.apiKey });
const portal = (id: string, path = '', body?: unknown) => call(stack.baseUrl, `/api/portal/${id}${path}`, body === undefined ? {} : { method: 'POST', body });

let serial = 0;
const newReceipt = async (webhookUrl?: string, totalUsd = 52.02) => {
  const id = `e2e-pay-${++serial}-${Date.now()}`;
  const created = await api('/api/receipts', { method: 'POST', body: { id, lineItems: [{ label: 'Beans', priceUsd: totalUsd }], totalUsd, ...(webhookUrl && { webhook_url: webhookUrl }) } });
  expect(created.status).toBe(201);
  return id;
};

const quote = async (id: string, token: string): Promise<Quote> => {
  const answer = await portal(id, '/quote', { token });
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  return answer.json.quote as Quote;
};

/** A wallet's payment of a quote: an ERC-20 transfer, or ETH to the split. */
const pay = async (from: Wallet, q: Quote, amount = BigInt(q.amount)) => {
  const tx = q.tokenAddress
    ? await new Contract(q.tokenAddress, testUsdcArtifact.abi, from).getFunction('transfer')(q.payTo, amount)
    : await from.sendTransaction({ to: q.payTo, value: amount });
  await tx.wait();
  return tx.hash as string;
};

const statusOf = async (id: string) => (await api(`/api/receipts/${id}`)).json;

/**
 * A hash reported as the page reports it, answered with its judgement: the watcher (every second) may
 * have recorded the transaction first, and then the answer is `already_recorded` with what it was
 * judged. A paid receipt may also have been distributed (reconciled) by then.
 */
const report = async (id: string, txHash: string) => {
  const answer = await portal(id, '/payments', { txHash });
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  const { outcome, recorded, status } = answer.json as { outcome: string; recorded?: string; status: string };
  return { ...answer.json, outcome: outcome === 'already_recorded' ? recorded : outcome, status: status === 'reconciled' ? 'paid' : status };
};

describe('paying a receipt on the local stack', () => {
  it.each([
    ['USDC', 1],
    ['USDT', 2],
    ['ETH', 3],
  ] as const)('%s paid and reported by hash → paid, with a signed webhook carrying the payment', async (token, n) => {
    const receiver = await startReceiver([], { secret: stack.apiKey });
    try {
      const id = await newReceipt(receiver.url);
      const q = await quote(id, token);
      const hash = await pay(buyer(n), q);
      expect(await report(id, hash)).toMatchObject({ outcome: 'paid', status: 'paid', transactionHash: hash });
      const receipt = await statusOf(id);
      expect(receipt).toMatchObject({ status: expect.stringMatching(/^(paid|reconciled)$/), transactionHash: hash, buyerWallet: buyer(n).address.toLowerCase(), token, amountPaid: q.amount });
      const delivery = await waitFor('the paid webhook', () => receiver.received.find((request) => JSON.parse(request.body).status === 'paid'));
      expect(delivery.verified?.ok).toBe(true);
      expect(JSON.parse(delivery.body)).toMatchObject({
        event: 'receipt.status_updated',
        receiptId: id,
        status: 'paid',
        previousStatus: 'pending',
        transactionHash: hash,
        buyerWallet: buyer(n).address.toLowerCase(),
        token,
        amountPaid: q.amount,
        merchantWallet: credentials.wallet,
      });
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('a plain transfer with no hash reported (a phone wallet from the QR code) is found by the watcher', async () => {
    const id = await newReceipt();
    const q = await quote(id, 'USDC');
    const hash = await pay(buyer(4), q);
    const receipt = await waitFor('the watcher', async () => {
      const current = await statusOf(id);
      return current.status === 'paid' ? current : undefined;
    }, 30_000);
    expect(receipt).toMatchObject({ transactionHash: hash, buyerWallet: buyer(4).address.toLowerCase() });
  }, 45_000);

  it('an underpayment stays unpaid; its hash reported for another receipt pays nothing there; bad input is a 4xx', async () => {
    const [first, second] = [await newReceipt(), await newReceipt()];
    const q = await quote(first, 'USDT');
    await quote(second, 'USDT');
    const short = await pay(buyer(5), q, BigInt(q.amount) - 10_000n);
    expect(await report(first, short)).toMatchObject({ outcome: 'underpaid', status: 'pending' });
    expect((await portal(first)).json).toMatchObject({ underpaid: { token: 'USDT', expected: q.amount } });
    const reused = await portal(second, '/payments', { txHash: short });
    expect(reused.status).toBe(400);
    expect(reused.json.error).toBe('not_a_payment');
    for (const [body, code] of [
      [{ txHash: '0x1234' }, 'invalid_input'],
      [{ txHash: `0x${'zz'.repeat(32)}` }, 'invalid_input'],
      [{ txHash: `0x${'ab'.repeat(32)}` }, 'transaction_not_found'],
      [{}, 'invalid_input'],
    ] as const) {
      const refused = await portal(second, '/payments', body);
      expect(refused.status, JSON.stringify(refused.json)).toBeLessThan(500);
      expect(refused.json.error).toBe(code);
    }
    expect((await portal('R-NOSUCHRECEIPT00', '/payments', { txHash: short })).status).toBe(404);
    expect((await call(stack.baseUrl, '/api/portal/..%2F..%2Fetc/payments', { method: 'POST', body: { txHash: short } })).status).toBe(404);
    const big = await fetch(`${stack.baseUrl}/api/portal/${second}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ txHash: 'x'.repeat(2_000_000) }) });
    expect(big.status).toBe(413);
    expect((await statusOf(second)).status).toBe('pending');
  }, 30_000);

  it('stock is decremented exactly once per paid receipt under 20 concurrent payments of the last 5 items', async () => {
    const sku = `LAST-${Date.now()}`;
    expect((await api('/api/inventory', { method: 'POST', body: { sku, name: 'The last ones', priceUsd: 3, stockQty: 5 } })).status).toBe(200);
    const ids: string[] = [];
    const quotes: Quote[] = [];
    for (let n = 0; n < 20; n++) {
      const order = await api('/api/orders', { method: 'POST', body: { items: [{ sku, qty: 1 }] } });
      expect(order.status).toBe(200);
      ids.push((order.json.receipt as { receiptId: string }).receiptId);
      // Quoted at once: a receipt may expire before its payment, never before its quote.
      quotes.push(await quote(ids.at(-1)!, 'USDC'));
    }
    const hashes: string[] = [];
    for (const q of quotes) hashes.push(await pay(buyer(5), q));
    const answers = await Promise.all(ids.map((id, n) => report(id, hashes[n]!)));
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 'paid'));
    const items = (await api(`/api/inventory?q=${sku.toLowerCase()}`)).json.items as Array<{ sku: string; stockQty: number }>;
    expect(items.find((item) => item.sku === sku)?.stockQty).toBe(0);
    const receipts = await Promise.all(ids.map(statusOf));
    const short = receipts.filter((receipt) => (receipt.stockShortfall as unknown[]).length > 0);
    expect(short).toHaveLength(15);
  }, 60_000);

  it('a reverted payment of the wallet the page connected fails the receipt with PORTAL_CHAIN_TX_REVERTED', async () => {
    const id = await newReceipt();
    const q = await quote(id, 'USDC');
    const empty = new Wallet(Wallet.createRandom().privateKey, provider);
    await provider.send('anvil_setBalance', [empty.address, '0xde0b6b3a7640000']);
    expect((await portal(id, '/events', { status: 'buyer_logged_in', wallet: empty.address.toLowerCase() })).status).toBe(200);
    const tx = await new Contract(q.tokenAddress!, testUsdcArtifact.abi, empty).getFunction('transfer')(q.payTo, BigInt(q.amount), { gasLimit: 100_000 });
    await tx.wait().catch(() => undefined);
    expect(await report(id, tx.hash)).toMatchObject({ outcome: 'reverted', status: 'failed' });
    expect((await api(`/api/receipts/status?id=${id}`)).json).toMatchObject({ status: 'failed', failureCode: 'PORTAL_CHAIN_TX_REVERTED', failureCategory: 'blockchain' });
  }, 30_000);

  it('ETH paid after the lock with the price moved beyond the tolerance → failed with PORTAL_CHAIN_SLIPPAGE_EXCEEDED', async () => {
    // The stack's lock is 10 minutes: a quote is made, anvil's clock moves past it, then the buyer pays.
    const id = await newReceipt();
    const q = await quote(id, 'ETH');
    // The buyer's wallet, connected on the page: its own shortfall slipped (a stranger's would be an underpayment).
    expect((await portal(id, '/events', { status: 'buyer_logged_in', wallet: buyer(1).address.toLowerCase() })).status).toBe(200);
    try {
      await setEthUsdPrice(credentials.rpcUrl, credentials.ethUsdFeed, 2_800);
      await provider.send('evm_setNextBlockTimestamp', [Math.floor(q.expiresAt / 1000) + 60]);
      const hash = await pay(buyer(1), q);
      expect(await report(id, hash)).toMatchObject({ outcome: 'slippage', status: 'failed' });
      expect((await api(`/api/receipts/status?id=${id}`)).json).toMatchObject({ failureCode: 'PORTAL_CHAIN_SLIPPAGE_EXCEEDED' });
    } finally {
      // The chain now runs past the lock, ahead of our clock: the feed's time is set back to ours, or
      // the next ETH quote would find the price dated in the future (stale).
      await setEthUsdPrice(credentials.rpcUrl, credentials.ethUsdFeed, 3_000);
      await setFeedUpdatedAt(credentials.rpcUrl, credentials.ethUsdFeed, Math.floor(Date.now() / 1000));
    }
  }, 30_000);

  it('an unpaid receipt expires (failed, PORTAL_SESSION_EXPIRED); a payment of its quote afterwards still makes it paid', async () => {
    const id = await newReceipt();
    const q = await quote(id, 'USDC');
    const expired = await waitFor('expiry', async () => {
      const status = (await api(`/api/receipts/status?id=${id}`)).json;
      return status.status === 'failed' ? status : undefined;
    }, 80_000);
    expect(expired).toMatchObject({ failureCode: 'PORTAL_SESSION_EXPIRED', failureCategory: 'session' });
    const refusal = await portal(id, '/quote', { token: 'USDC' });
    expect(refusal.status).toBe(409);
    expect(refusal.json.error).toBe('receipt_not_payable');
    const hash = await pay(buyer(2), q);
    expect(await report(id, hash)).toMatchObject({ outcome: 'paid', status: 'paid' });
  }, 100_000);
});

describe('after payment on the local stack', () => {
  /** The demo merchant (anvil account 1) signed in. */
  const merchantSession = () => signedInPost(stack.baseUrl, ANVIL_ACCOUNTS[1].privateKey);

  it('distribute → reconciled, with the payees paid their shares on chain', async () => {
    const id = await newReceipt(undefined, 100);
    const q = await quote(id, 'USDC');
    const usdc = new Contract(credentials.tokens.USDC, testUsdcArtifact.abi, provider);
    const { split } = (await api('/api/split/deploy')).json as { split: { address: string; recipients: Array<{ address: string; bps: number }> } };
    const before = await Promise.all(split.recipients.map((payee) => usdc.getFunction('balanceOf')(payee.address) as Promise<bigint>));
    const hash = await pay(buyer(3), q);
    expect(await report(id, hash)).toMatchObject({ status: 'paid' });
    const reconciled = await waitFor('reconciliation', async () => {
      const receipt = await statusOf(id);
      return receipt.status === 'reconciled' ? receipt : undefined;
    }, 40_000);
    expect(reconciled.reconciledTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    const after = await Promise.all(split.recipients.map((payee) => usdc.getFunction('balanceOf')(payee.address) as Promise<bigint>));
    const gained = after.map((balance, index) => balance - before[index]!);
    // Everything the split held was paid out in its shares (other payments may have been in it too);
    // the merchant (first payee) takes the rounding remainder.
    const total = gained.reduce((sum, value) => sum + value, 0n);
    expect(total >= BigInt(q.amount)).toBe(true);
    split.recipients.slice(1).forEach((payee, index) => expect(gained[index + 1]).toBe((total * BigInt(payee.bps)) / 10_000n));
  }, 60_000);

  it('a partial refund then the rest → refunded each time, verified on chain, from the merchant to the payer', async () => {
    const session = await merchantSession();
    const id = await newReceipt(undefined, 40);
    const q = await quote(id, 'USDT');
    const payer = buyer(4);
    expect(await report(id, await pay(payer, q))).toMatchObject({ outcome: 'paid' });
    const merchant = new Wallet(ANVIL_ACCOUNTS[1].privateKey, provider);
    const usdt = new Contract(credentials.tokens.USDT, testUsdcArtifact.abi, merchant);
    await (await usdt.getFunction('mint')(merchant.address, 1_000_000_000n)).wait();

    const tooMuch = await session('/api/receipts/refund', { id, amountUsd: 1_000 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json.error).toBe('refund_too_large');

    const partial = await session('/api/receipts/refund', { id, amountUsd: 10, reason: 'one item returned' });
    expect(partial.status, JSON.stringify(partial.json)).toBe(200);
    const refund = partial.json.refund as { amount: string; to: string; from: string; uri: string };
    expect(partial.json.status).toBe('refund_requested');
    expect(refund).toMatchObject({ amount: '10000000', to: payer.address.toLowerCase(), from: credentials.wallet });
    const sent = await (await usdt.getFunction('transfer')(refund.to, BigInt(refund.amount))).wait();
    const reported = await session('/api/receipts/refund/transaction', { id, txHash: sent.hash });
    expect(reported.json).toMatchObject({ outcome: 'refunded', status: 'refunded' });
    expect((await statusOf(id)).refundedUsd).toBe(10);

    // The rest, sent without reporting the hash: the watcher finds it.
    const rest = await session('/api/receipts/refund', { id });
    const restRefund = rest.json.refund as { amount: string; to: string; amountUsd: number };
    await (await usdt.getFunction('transfer')(restRefund.to, BigInt(restRefund.amount))).wait();
    const refunded = await waitFor('the refund watcher', async () => {
      const receipt = await statusOf(id);
      return receipt.status === 'refunded' && receipt.refundedUsd === receipt.customerTotalUsd ? receipt : undefined;
    }, 30_000);
    expect((refunded.refunds as unknown[]).length).toBe(2);
  }, 60_000);
});
