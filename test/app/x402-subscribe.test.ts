import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from '@x402/extensions/sign-in-with-x';
import { Wallet } from 'ethers';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, inject, it } from 'vitest';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import type { AppDeps } from '../../shared/app/deps';
import { signInWithXChallenge } from '../../shared/app/x402/siwx';
import { extendPlan, x402Subscribe } from '../../shared/app/x402/subscribe';
import { memoryDeps } from '../../shared/composition';
import { newMerchant } from '../../shared/domain/merchant';
import { SUBSCRIPTION_TERM_MS } from '../../shared/domain/x402-requests';

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
