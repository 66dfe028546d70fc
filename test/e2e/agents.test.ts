import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from '@x402/extensions/sign-in-with-x';
import { Contract, Signature, Wallet, hexlify, randomBytes, type JsonRpcProvider } from 'ethers';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { verifyWebhook } from '../../shared/webhook-verify.mjs';
import { transferWithAuthorization } from '../support/eip3009';
import { startReceiver } from '../support/receiver';
import { call, root, signedInPost, stackEnv, startStack, stopStack, tsx, type StartedStack } from '../support/stack';

/**
 * Agents on `npm start`, over HTTP, with the protocol's own client: the README's `npm run agent`
 * (directory, an x402 order, a pro subscription with @x402/fetch), a v1 proof built and signed as the
 * v1 format says, a replay, and the free starter plan with sign-in-with-x.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'agents-e2e-'));
let stack: StartedStack;
let provider: JsonRpcProvider;
let credentials: { rpcUrl: string; chainId: number; tokens: { USDC: string }; wallet: string };

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

const usdc = () => new Contract(credentials.tokens.USDC, testUsdcArtifact.abi, provider);
const splitAddress = async () => ((await call(stack.baseUrl, '/api/split/deploy', { key: stack.apiKey })).json.split as { address: string }).address;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('agents on the local stack', () => {
  it('npm run agent: lists the directory, buys with @x402/fetch (a paid receipt, USDC in the split, a signed webhook) and subscribes to pro (a working key)', async () => {
    const receiver = await startReceiver();
    try {
      const session = await signedInPost(stack.baseUrl, ANVIL_ACCOUNTS[1].privateKey);
      const configured = await session('/api/shop/config', { webhookUrl: receiver.url });
      expect(configured.status).toBe(200);
      // The shop's first webhook URL makes its signing secret, shown in this answer only: no key created an agent's receipt, so it signs.
      const webhookSecret = configured.json.webhookSecret as string;
      expect(webhookSecret).toMatch(/^whsec_/);
      const split = await splitAddress();
      const before = (await usdc().getFunction('balanceOf')(split)) as bigint;

      const { stdout } = await promisify(execFile)(tsx, ['scripts/agent.ts', '--buyer', '3'], { cwd: root, env: { ...process.env, DATA_DIR: dataDir } });
      expect(stdout).toContain('directory: Demo Coffee Roasters (demo-coffee)');
      const [, receiptId, , hash] = /order: receipt (\S+), ([\d.]+) USD, paid \(transaction (0x[0-9a-f]{64})/.exec(stdout)!;
      const apiKey = /API key (\S+)/.exec(stdout)![1]!;

      const receipt = (await call(stack.baseUrl, `/api/receipts/${receiptId}`, { key: stack.apiKey })).json;
      expect(receipt).toMatchObject({ status: 'paid', transactionHash: hash, token: 'USDC', buyerWallet: ANVIL_ACCOUNTS[7].address });
      const after = (await usdc().getFunction('balanceOf')(split)) as bigint;
      expect(after - before).toBe(BigInt(receipt.amountPaid as string));
      const [delivery] = await receiver.waitFor(1);
      expect(verifyWebhook({ body: delivery!.body, headers: delivery!.headers, secret: webhookSecret }).ok).toBe(true);
      expect(verifyWebhook({ body: delivery!.body, headers: delivery!.headers, secret: stack.apiKey }).ok).toBe(false);
      expect(JSON.parse(delivery!.body)).toMatchObject({ receiptId, status: 'paid', transactionHash: hash });

      expect((await call(stack.baseUrl, '/api/inventory', { key: apiKey })).status).toBe(200);

      // The merchant can refund an agent's order like any other: in USDC, to the paying wallet.
      const refund = await session('/api/receipts/refund', { id: receiptId, amountUsd: 1 });
      expect(refund.status, JSON.stringify(refund.json)).toBe(200);
      expect(refund.json.refund).toMatchObject({ token: 'USDC', amount: '1000000', to: ANVIL_ACCOUNTS[7].address, from: credentials.wallet });
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it('a v1 X-PAYMENT proof settles once: the same proof again is answered the same, and charges nothing', async () => {
    const body = { shopSlug: 'demo-coffee', items: [{ sku: 'MUG-CERAMIC', qty: 1 }] };
    const challenge = await post('/api/x402/orders', body);
    expect(challenge.status).toBe(402);
    const v1 = (await challenge.json()) as { x402Version: number; accepts: Array<{ network: string; maxAmountRequired: string; payTo: string; asset: string; resource: string; maxTimeoutSeconds: number; extra: { name: string; version: string } }> };
    expect(v1.x402Version).toBe(1);
    const v2 = decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!);
    expect(v2).toMatchObject({ x402Version: 2, accepts: [{ network: `eip155:${credentials.chainId}`, amount: v1.accepts[0]!.maxAmountRequired }] });

    const need = v1.accepts[0]!;
    const payer = new Wallet(ANVIL_ACCOUNTS[8].privateKey);
    const now = Math.floor(Date.now() / 1000);
    const authorization = { from: payer.address, to: need.payTo, value: need.maxAmountRequired, validAfter: String(now - 60), validBefore: String(now + need.maxTimeoutSeconds), nonce: hexlify(randomBytes(32)) };
    const signature = await payer.signTypedData(
      { name: need.extra.name, version: need.extra.version, chainId: credentials.chainId, verifyingContract: need.asset },
      { TransferWithAuthorization: transferWithAuthorization },
      authorization,
    );
    expect(Signature.from(signature).serialized).toBe(signature);
    const proof = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: need.network, payload: { signature, authorization } })).toString('base64');

    const balance = async () => (await usdc().getFunction('balanceOf')(payer.address)) as bigint;
    const start = await balance();
    const paid = await post('/api/x402/orders', body, { 'X-PAYMENT': proof });
    expect(paid.status).toBe(200);
    expect(paid.headers.get('X-PAYMENT-RESPONSE')).toBeTruthy();
    const first = (await paid.json()) as { receipt: { receiptId: string; status: string } };
    expect(first.receipt.status).toBe('paid');
    expect(start - (await balance())).toBe(BigInt(need.maxAmountRequired));

    const again = await post('/api/x402/orders', body, { 'X-PAYMENT': proof });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(first);
    expect(start - (await balance())).toBe(BigInt(need.maxAmountRequired));
  }, 60_000);

  it('starter: a 402 offers sign-in-with-x; a signed proof gets a key; a second starter for the wallet is refused', async () => {
    const account = privateKeyToAccount(Wallet.createRandom().privateKey as `0x${string}`);
    const resource = `${stack.baseUrl}/api/x402/subscribe`;
    const signIn = async () => {
      const offer = await post('/api/x402/subscribe', { planKey: 'starter' });
      expect(offer.status).toBe(402);
      const extension = decodePaymentRequiredHeader(offer.headers.get('PAYMENT-REQUIRED')!).extensions?.['sign-in-with-x'] as { info: Omit<CompleteSIWxInfo, 'chainId' | 'type'>; supportedChains: Array<{ chainId: string }> };
      const info: CompleteSIWxInfo = { ...extension.info, chainId: extension.supportedChains[0]!.chainId, type: 'eip191' };
      return encodeSIWxHeader(await createSIWxPayload(info, account, resource));
    };
    const first = await post('/api/x402/subscribe', { planKey: 'starter' }, { 'SIGN-IN-WITH-X': await signIn() });
    expect(first.status).toBe(200);
    const result = (await first.json()) as { plan: string; priceUsd: number; apiKey: string };
    expect(result).toMatchObject({ plan: 'starter', priceUsd: 0 });
    expect((await call(stack.baseUrl, '/api/inventory', { key: result.apiKey })).status).toBe(200);

    const second = await post('/api/x402/subscribe', { planKey: 'starter' }, { 'SIGN-IN-WITH-X': await signIn() });
    expect(second.status).toBe(409);
    const bad = await post('/api/x402/subscribe', { planKey: 'starter' }, { 'SIGN-IN-WITH-X': 'not-a-proof' });
    expect(bad.status).toBe(401);
  }, 60_000);

  it('the directory marks the caller’s own shop when it signs in with x', async () => {
    const merchant = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey as `0x${string}`);
    const offer = await post('/api/x402/subscribe', { planKey: 'starter' });
    const extension = decodePaymentRequiredHeader(offer.headers.get('PAYMENT-REQUIRED')!).extensions?.['sign-in-with-x'] as { info: Omit<CompleteSIWxInfo, 'chainId' | 'type'>; supportedChains: Array<{ chainId: string }> };
    const directoryUrl = `${stack.baseUrl}/api/directory/shops`;
    const info: CompleteSIWxInfo = { ...extension.info, uri: directoryUrl, chainId: extension.supportedChains[0]!.chainId, type: 'eip191' };
    const proof = encodeSIWxHeader(await createSIWxPayload(info, merchant, directoryUrl));
    const signedIn = (await (await fetch(directoryUrl, { headers: { 'SIGN-IN-WITH-X': proof } })).json()) as { directory: Array<{ slug: string; own?: boolean }> };
    expect(signedIn.directory.find((shop) => shop.slug === 'demo-coffee')).toMatchObject({ own: true });
    const anonymous = (await (await fetch(directoryUrl)).json()) as { directory: Array<{ slug: string; own?: boolean }> };
    expect(anonymous.directory.find((shop) => shop.slug === 'demo-coffee')?.own).toBeUndefined();
    expect((await fetch(directoryUrl, { headers: { 'SIGN-IN-WITH-X': 'forged' } })).status).toBe(401);
  }, 30_000);

  it('orders that cannot be priced answer their 4xx before any challenge', async () => {
    for (const [body, status, error] of [
      [{ shopSlug: 'no-such-shop', items: [{ sku: 'X', qty: 1 }] }, 404, 'not_found'],
      [{ shopSlug: 'demo-coffee', items: [{ sku: 'NOPE', qty: 1 }] }, 400, 'inventory_item_not_found'],
      [{ shopSlug: 'demo-coffee', items: [] }, 400, 'items_required'],
      [{ shopSlug: 'demo-coffee', items: [{ sku: 'MUG-CERAMIC', qty: 1 }], jurisdictionCode: 'ZZ-99' }, 400, 'invalid_input'],
    ] as const) {
      const answer = await post('/api/x402/orders', body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(((await answer.json()) as { error: string }).error).toBe(error);
    }
  }, 30_000);
});
