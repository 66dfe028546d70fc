import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { Wallet, verifyTypedData } from 'ethers';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { DEVELOPMENT_RECEIPT_SIGNING_KEY, compose, memoryDeps, setDeps } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { httpFunctions } from '../../shared/http/function';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { tickingClock } from '../support/fixtures';
import { payReceipt } from '../support/paid-receipts';
import { wallets } from '../support/stores';

let deps: AppDeps;
let alice: Merchant;
let bob: Merchant;
const as = (merchant: Merchant) => ({ 'x-subscription-id': merchant.subscriptionId });
const signerAddress = new Wallet(DEVELOPMENT_RECEIPT_SIGNING_KEY).address;

beforeEach(async () => {
  deps = memoryDeps({ clock: tickingClock() });
  setDeps(deps);
  alice = await addMerchant(deps, wallets.alice);
  bob = await addMerchant(deps, wallets.bob);
  await payReceipt(deps, wallets.alice, 'paid-1');
  await invoke('receipts-create', { method: 'POST', path: '/api/receipts', headers: as(alice), body: { id: 'open-1', lineItems: [{ label: 'Beans', priceUsd: 5 }], totalUsd: 5 } });
});

const shapeOf = (json: Record<string, unknown>) => Object.keys(json).sort();

describe('GET /api/receipts/{id}/proof', () => {
  it('answers the merchant’s own paid receipt’s proof, which verifies against the signer', async () => {
    const answer = await invoke('receipts-proof', { path: '/api/receipts/paid-1/proof', headers: as(alice) });
    expect(answer.status).toBe(200);
    expect(shapeOf(answer.json)).toEqual(['domain', 'message', 'primaryType', 'signature', 'signer', 'types']);
    const { domain, types, message, signature, signer } = answer.json as never as { domain: never; types: never; message: { amount: unknown }; signature: string; signer: string };
    expect(signer).toBe(signerAddress);
    expect(verifyTypedData(domain, types, message, signature)).toBe(signerAddress);
    expect(typeof message.amount).toBe('string');
  });

  it('refuses another merchant’s receipt (404), a key without receipts:read (403) and no key (401)', async () => {
    expect(await invoke('receipts-proof', { path: '/api/receipts/paid-1/proof', headers: as(bob) })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    const writer = await addMerchant(deps, wallets.alice, { scopes: ['receipts:write'] });
    expect(await invoke('receipts-proof', { path: '/api/receipts/paid-1/proof', headers: as(writer) })).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    expect(await invoke('receipts-proof', { path: '/api/receipts/paid-1/proof' })).toMatchObject({ status: 401 });
  });

  it('answers 409 receipt_not_paid for a receipt not paid', async () => {
    expect(await invoke('receipts-proof', { path: '/api/receipts/open-1/proof', headers: as(alice) })).toMatchObject({ status: 409, json: { error: 'receipt_not_paid', status: 'pending' } });
  });
});

describe('GET /api/portal/{id}/proof', () => {
  it('needs no key and answers the same document as the merchant’s route', async () => {
    const buyer = await invoke('portal-proof', { path: '/api/portal/paid-1/proof' });
    const merchant = await invoke('receipts-proof', { path: '/api/receipts/paid-1/proof', headers: as(alice) });
    expect(buyer.status).toBe(200);
    expect(buyer.json).toEqual(merchant.json);
  });

  it('answers 409 receipt_not_paid before payment and 404 for an unknown receipt', async () => {
    expect(await invoke('portal-proof', { path: '/api/portal/open-1/proof' })).toMatchObject({ status: 409, json: { error: 'receipt_not_paid' } });
    expect(await invoke('portal-proof', { path: '/api/portal/R-NOSUCHRECEIPT/proof' })).toMatchObject({ status: 404, json: { error: 'not_found' } });
  });
});

describe('GET /.well-known/receipt-signer', () => {
  it('publishes the signer’s address, the chain and the domain, to anyone', async () => {
    const answer = await invoke('receipt-signer', { path: '/.well-known/receipt-signer' });
    expect(answer).toMatchObject({ status: 200, json: { address: signerAddress, chainId: deps.settings.chainId, domain: { name: deps.settings.brandName, version: '1', chainId: deps.settings.chainId } } });
  });

  it('answers 503 where no key is configured (production without RECEIPT_SIGNING_KEY), and uses the one configured', async () => {
    const production = { STORE: 'memory', APP_ENV: 'production', JWT_SECRET: 'j'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };
    setDeps(compose(loadConfig(production)).deps);
    expect(await invoke('receipt-signer', { path: '/.well-known/receipt-signer' })).toMatchObject({ status: 503, json: { error: 'service_unavailable' } });
    const key = Wallet.createRandom();
    setDeps(compose(loadConfig({ ...production, RECEIPT_SIGNING_KEY: key.privateKey })).deps);
    expect(await invoke('receipt-signer', { path: '/.well-known/receipt-signer' })).toMatchObject({ status: 200, json: { address: key.address, retired: [] } });
  });

  it('lists the keys rotated out, newest first, and never the current key among them', async () => {
    const production = { STORE: 'memory', APP_ENV: 'production', JWT_SECRET: 'j'.repeat(32), DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };
    const [current, older, old] = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()];
    const retired = `${older.address}@2026-03-01T00:00:00Z,${old.address}@2026-06-01T12:00:00Z,${current.address}@2026-01-01T00:00:00Z`;
    setDeps(compose(loadConfig({ ...production, RECEIPT_SIGNING_KEY: current.privateKey, RECEIPT_SIGNERS_RETIRED: retired })).deps);
    expect(await invoke('receipt-signer', { path: '/.well-known/receipt-signer' })).toMatchObject({
      status: 200,
      json: {
        address: current.address,
        retired: [
          { address: old.address.toLowerCase(), retiredAt: Date.UTC(2026, 5, 1, 12) },
          { address: older.address.toLowerCase(), retiredAt: Date.UTC(2026, 2, 1) },
        ],
      },
    });
  });
});

describe("the portal's Download receipt", () => {
  it('links the paid page to the proof, which downloads and verifies', async () => {
    const page = await invokePage('/portal/paid-1');
    const link = /<a class="proof-link" href="([^"]+)" download="([^"]+)"[^>]*>Download receipt<\/a>/.exec(page)!;
    expect(link[2]).toBe('receipt-paid-1.json');
    const proof = await invoke('portal-proof', { path: link[1]! });
    expect(proof.status).toBe(200);
    const { domain, types, message, signature } = proof.json as never as { domain: never; types: never; message: never; signature: string };
    expect(verifyTypedData(domain, types, message, signature)).toBe(signerAddress);
  });
});

/** A page route's markup, through its handler. */
const invokePage = async (path: string) => {
  const handler = httpFunctions.get('portal-page')!.options.handler;
  const response = (await handler(new HttpRequest({ method: 'GET', url: `http://localhost${path}`, params: { id: path.split('/').pop()! } }), new InvocationContext({ functionName: 'portal-page', logHandler: () => {} }))) as HttpResponseInit;
  expect(response.status ?? 200).toBe(200);
  return String(response.body);
};
