import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from '@x402/extensions/sign-in-with-x';
import { Wallet } from 'ethers';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import '../../functions/index';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import type { AppDeps } from '../../shared/app/deps';
import { updateShopConfig } from '../../shared/app/shop-config';
import { signInWithXChallenge } from '../../shared/app/x402/siwx';
import { memoryDeps, setDeps } from '../../shared/composition';
import { ShopConfigUpdate } from '../../shared/domain/shop';
import { invoke } from '../support/http';

/**
 * GET /api/shop/config names sign-in-with-x beside the key: a wallet that proves itself reads its own
 * shop configuration without a key; a proof that does not hold is 401, and so is nothing at all.
 */
let deps: AppDeps;
const key = Wallet.createRandom().privateKey;
const wallet = new Wallet(key).address.toLowerCase();
const RESOURCE = 'http://localhost:7071/api/shop/config';

beforeAll(async () => {
  const chain = inject('chain');
  const base = memoryDeps();
  deps = memoryDeps({
    x402: x402Protocol({ rpcUrl: chain.rpcUrl, chainId: chain.chainId }),
    settings: { ...base.settings, baseUrl: 'http://localhost:7071', siweDomain: 'localhost:7071', chainId: chain.chainId },
  });
  setDeps(deps);
  await updateShopConfig(deps, wallet, ShopConfigUpdate.parse({ branding: { name: 'Proven Shop' } }));
});

const proofFor = async (privateKey: string, resource = RESOURCE) => {
  const offer = await signInWithXChallenge(deps, { resource });
  const info: CompleteSIWxInfo = { ...offer.info, chainId: offer.supportedChains[0]!.chainId, type: 'eip191' };
  return encodeSIWxHeader(await createSIWxPayload(info, privateKeyToAccount(privateKey as `0x${string}`), resource));
};

describe('GET /api/shop/config with sign-in-with-x', () => {
  it("answers the proving wallet's own configuration, without a key", async () => {
    const answer = await invoke('shop-config-get', { path: '/api/shop/config', headers: { 'SIGN-IN-WITH-X': await proofFor(key) } });
    expect(answer.status).toBe(200);
    expect(answer.json.config).toMatchObject({ branding: { name: 'Proven Shop' } });
  });

  it('refuses a proof for another resource, a forged one, and no credential at all (401)', async () => {
    const elsewhere = await proofFor(key, 'http://localhost:7071/api/directory/shops');
    for (const headers of [{ 'SIGN-IN-WITH-X': elsewhere }, { 'SIGN-IN-WITH-X': 'forged' }, {}] as Array<Record<string, string>>) {
      const answer = await invoke('shop-config-get', { path: '/api/shop/config', headers });
      expect(answer.status).toBe(401);
      expect(answer.json.error).toBe('unauthorized');
    }
  });
});
