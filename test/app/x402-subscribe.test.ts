import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from '@x402/extensions/sign-in-with-x';
import { Contract, NonceManager, Wallet, toQuantity, type JsonRpcProvider } from 'ethers';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { inProcessSettler } from '../../shared/adapters/x402/in-process-settler';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import type { AppDeps } from '../../shared/app/deps';
import { rememberAnswer } from '../../shared/app/x402/gate';
import { signInWithXChallenge } from '../../shared/app/x402/siwx';
import { extendPlan, issuePlanKey, x402Subscribe } from '../../shared/app/x402/subscribe';
import { memoryDeps } from '../../shared/composition';
import { newMerchant } from '../../shared/domain/merchant';
import { SUBSCRIPTION_TERM_MS } from '../../shared/domain/x402-requests';
import { paymentProofClaimId } from '../../shared/domain/x402';
import { protocolProof, v2ProofHeader } from '../support/x402';

/** The subscription rules that need no chain: plan terms per payment, and the starter plan's one key. */
const NOW = 1_800_000_000_000;
const depsAt = (now = NOW): AppDeps => {
  const base = memoryDeps();
  // Sign-in-with-x reads the chain (a contract wallet's EIP-1271 answer): the run's anvil.
  const chain = inject('chain');
  return memoryDeps({
    clock: { now: () => now },
    x402: x402Protocol({ rpcUrl: chain.rpcUrl, chainId: chain.chainId }),
    settings: { ...base.settings, baseUrl: 'http://localhost:7071', siweDomain: 'localhost:7071', chainId: chain.chainId },
  });
};
const wallet = () => Wallet.createRandom().address.toLowerCase();

describe('paid plan terms', () => {
  it('one payment adds one term, however often its run is let through again', async () => {
    const deps = depsAt();
    const who = wallet();
    expect(await extendPlan(deps, who, 'pro', 'proof-1')).toBe(NOW + SUBSCRIPTION_TERM_MS);
    expect(await extendPlan(deps, who, 'pro', 'proof-1')).toBe(NOW + SUBSCRIPTION_TERM_MS);
    // A second payment renews from the end of the first term.
    expect(await extendPlan(deps, who, 'pro', 'proof-2')).toBe(NOW + 2 * SUBSCRIPTION_TERM_MS);
  });

  it('keeps a plan granted without an end at the same level or above; a lower one is replaced', async () => {
    const deps = depsAt();
    const granted = wallet();
    await deps.merchants.upsert(granted, { ...newMerchant(granted, NOW), plan: { name: 'enterprise', expiresAt: null, source: 'admin' } });
    expect(await extendPlan(deps, granted, 'pro', 'proof-3')).toBeNull();
    expect((await deps.merchants.get(granted, granted))!.value.plan).toEqual({ name: 'enterprise', expiresAt: null, source: 'admin' });
    const lower = wallet();
    await deps.merchants.upsert(lower, { ...newMerchant(lower, NOW), plan: { name: 'pro', expiresAt: null, source: 'admin' } });
    expect(await extendPlan(deps, lower, 'enterprise', 'proof-4')).toBe(NOW + SUBSCRIPTION_TERM_MS);
  });
});

describe('the key a payment buys', () => {
  it('is issued once: a run of the same proof let through again gets the key’s id and no key', async () => {
    const deps = depsAt();
    const who = wallet();
    const first = await issuePlanKey(deps, who, 'proof-key-1');
    if (!('apiKey' in first)) throw new Error('the first run issues the key');
    expect(first.apiKey).toBeTruthy();
    const again = await issuePlanKey(deps, who, 'proof-key-1');
    expect(again).toEqual({ subscriptionId: first.key.id });
    expect(JSON.stringify(again)).not.toContain(first.apiKey);
    expect(await deps.subscriptions.list({ wallet: who })).toHaveLength(1);
    // Another payment buys another key.
    expect('apiKey' in (await issuePlanKey(deps, who, 'proof-key-2'))).toBe(true);
  });
});

describe('the starter plan', () => {
  const signIn = async (deps: AppDeps, key: string) => {
    const resource = `${deps.settings.baseUrl}/api/x402/subscribe`;
    const offer = await signInWithXChallenge(deps, { resource });
    const info: CompleteSIWxInfo = { ...offer.info, chainId: offer.supportedChains[0]!.chainId, type: 'eip191' };
    const header = encodeSIWxHeader(await createSIWxPayload(info, privateKeyToAccount(key as `0x${string}`), resource));
    return { get: (name: string) => (name.toLowerCase() === 'sign-in-with-x' ? header : null) };
  };

  it('gives a wallet one starter key, and a wallet on a paid plan none, without using up its starter', async () => {
    const deps = depsAt(Date.now());
    const key = Wallet.createRandom().privateKey;
    const address = new Wallet(key).address.toLowerCase();
    await deps.merchants.upsert(address, { ...newMerchant(address, Date.now()), plan: { name: 'pro', expiresAt: Date.now() + 60_000, source: 'x402' } });
    await expect(x402Subscribe(deps, await signIn(deps, key), { planKey: 'starter' })).rejects.toMatchObject({ code: 'conflict' });
    // The paid plan over: the starter key is still the wallet's to take, once.
    await deps.merchants.upsert(address, { ...newMerchant(address, Date.now()), plan: { name: 'pro', expiresAt: deps.clock.now() - 1, source: 'x402' } });
    const first = await x402Subscribe(deps, await signIn(deps, key), { planKey: 'starter' });
    expect(first).toMatchObject({ status: 200, body: { plan: 'starter', priceUsd: 0 } });
    await expect(x402Subscribe(deps, await signIn(deps, key), { planKey: 'starter' })).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('a paid subscription given again', () => {
  const chain = inject('chain');
  let provider: JsonRpcProvider;
  let usdc: Contract;
  let relayerKey: string;

  const fundedAccount = async () => {
    const account = Wallet.createRandom();
    await provider.send('anvil_setBalance', [account.address, toQuantity(10n ** 20n)]);
    return account;
  };

  beforeAll(async () => {
    provider = createProvider(chain.rpcUrl, chain.chainId);
    usdc = new Contract(chain.usdc, testUsdcArtifact.abi, new NonceManager((await fundedAccount()).connect(provider)));
    relayerKey = (await fundedAccount()).privateKey;
  });
  afterAll(() => provider.destroy());

  const paidDeps = (): AppDeps => {
    const base = memoryDeps();
    return memoryDeps({
      settler: inProcessSettler({ rpcUrl: chain.rpcUrl, chainId: chain.chainId, relayerPrivateKey: relayerKey }),
      x402: x402Protocol({ rpcUrl: chain.rpcUrl, chainId: chain.chainId }),
      settings: {
        ...base.settings,
        baseUrl: 'http://localhost:7071',
        siweDomain: 'localhost:7071',
        chainId: chain.chainId,
        platformWallet: wallet(),
        tokens: [{ symbol: 'USDC', address: chain.usdc.toLowerCase(), decimals: 6 }],
      },
    });
  };

  /** The pro plan paid by a new payer: the proof's header, made by the protocol's own client for the route's challenge. */
  const payForPro = async (deps: AppDeps) => {
    const payer = Wallet.createRandom();
    await (await usdc.getFunction('mint').send(payer.address, 400_000_000n)).wait();
    const challenge = await x402Subscribe(deps, new Headers(), { planKey: 'pro' });
    expect(challenge.status).toBe(402);
    const payload = await protocolProof(payer.privateKey, challenge.headers['PAYMENT-REQUIRED']!);
    const authorization = (payload.payload as { authorization: { from: string; nonce: string } }).authorization;
    const proofKey = paymentProofClaimId(chain.chainId, chain.usdc.toLowerCase(), authorization.from, authorization.nonce);
    return { headers: new Headers(v2ProofHeader(payload)), proofKey };
  };

  it('answers the subscription without its key: the key is shown once, and the stored answer never held it', async () => {
    const deps = paidDeps();
    const { headers, proofKey } = await payForPro(deps);
    const first = await x402Subscribe(deps, headers, { planKey: 'pro' });
    expect(first.status).toBe(200);
    const paid = first.body as { apiKey: string; subscriptionId: string; expiresAt: number };
    expect(paid.apiKey).toMatch(/^sk_/);

    // Anyone holding the header (the payer again, or a facilitator that saw it) gets the subscription, not the key.
    const again = await x402Subscribe(deps, headers, { planKey: 'pro' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true, plan: 'pro', priceUsd: 399, subscriptionId: paid.subscriptionId, expiresAt: paid.expiresAt, message: expect.stringMatching(/shown once/) });
    expect(JSON.stringify(again)).not.toContain(paid.apiKey);

    const record = await deps.claims.get(proofKey, proofKey);
    expect(record?.value).toMatchObject({ state: 'settled', answer: { status: 200, body: { subscriptionId: paid.subscriptionId } } });
    const stored = JSON.stringify(record!.value);
    expect(stored).not.toContain(paid.apiKey);
    expect(stored).not.toContain('apiKey');

    // A record kept before answers were checked (the key in its answer) gives the key out no more either.
    const answer = (record!.value as unknown as { answer: { body: object } }).answer;
    await deps.claims.replace(proofKey, { ...record!.value, answer: { ...answer, body: { ...answer.body, apiKey: paid.apiKey } } } as never, record!.etag);
    const legacy = await x402Subscribe(deps, headers, { planKey: 'pro' });
    expect(legacy).toMatchObject({ status: 200, body: { subscriptionId: paid.subscriptionId } });
    expect(JSON.stringify(legacy)).not.toContain(paid.apiKey);
  }, 60_000);

  it('will not keep an answer that holds a secret, wherever it sits in the body', async () => {
    const deps = paidDeps();
    const proofKey = 'x402-proof:test';
    await deps.claims.create(proofKey, { id: proofKey, owner: 'http://localhost:7071/api/x402/subscribe', createdAt: NOW });
    for (const body of [{ ok: true, apiKey: 'sk_secret' }, { ok: true, nested: [{ webhookSecret: 'whsec_secret' }] }]) {
      await expect(rememberAnswer(deps, proofKey, { status: 200, body, headers: {} })).rejects.toThrow(/secret/);
    }
    expect(JSON.stringify((await deps.claims.get(proofKey, proofKey))!.value)).not.toContain('secret"');
  });
});
