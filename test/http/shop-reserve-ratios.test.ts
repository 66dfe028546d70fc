import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { ZERO_ADDRESS } from '../../shared/domain/payment';
import { addMerchant, invoke, type Merchant } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

let merchant: SignedInBrowser;
let key: Merchant;

/** A deployment that takes USDC and USDT, and ETH only when `eth` is set (ETH needs a price feed). */
const deploymentWith = (eth: boolean): AppDeps => {
  const deps = memoryDeps();
  const tokens = [
    { symbol: 'USDC' as const, address: '0x' + 'a'.repeat(40), decimals: 6 },
    { symbol: 'USDT' as const, address: '0x' + 'b'.repeat(40), decimals: 6 },
    ...(eth ? [{ symbol: 'ETH' as const, address: ZERO_ADDRESS, decimals: 18 }] : []),
  ];
  return { ...deps, settings: { ...deps.settings, tokens } };
};

const start = async (eth = true) => {
  const deps = deploymentWith(eth);
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
  key = await addMerchant(deps, testWallets.merchant.address.toLowerCase());
};

const update = (body: unknown) => invoke('shop-config-update', { method: 'POST', path: '/api/shop/config', headers: merchant.headers(), body });
const read = () => invoke('shop-config-get', { path: '/api/shop/config', headers: { 'x-subscription-id': key.subscriptionId } });

describe('reserveRatios in POST /api/shop/config', () => {
  beforeEach(() => start());

  it('starts unset, takes target shares that sum to 1, keeps them when other groups change, and clears with null', async () => {
    expect((await read()).json.config).toMatchObject({ reserveRatios: null });
    expect(await update({ reserveRatios: { USDC: 0.5, USDT: 0.3, ETH: 0.2 } })).toMatchObject({ status: 200, json: { config: { reserveRatios: { USDC: 0.5, USDT: 0.3, ETH: 0.2 } } } });
    await update({ processingFeePct: 1 });
    expect((await read()).json.config).toMatchObject({ processingFeePct: 1, reserveRatios: { USDC: 0.5, USDT: 0.3, ETH: 0.2 } });
    // Thirds do not add up to exactly 1 in binary; within 1e-9 they count as 1.
    expect((await update({ reserveRatios: { USDC: 1 / 3, USDT: 1 / 3, ETH: 1 / 3 } })).status).toBe(200);
    expect((await update({ reserveRatios: null })).json).toMatchObject({ config: { reserveRatios: null } });
  });

  it.each([
    [{ USDC: 0.5, USDT: 0.4 }, 'reserveRatios', 'reserveRatios: the target shares must sum to 1 (these sum to 0.9)'],
    [{ USDC: 0.6, USDT: 0.6, ETH: -0.2 }, 'reserveRatios.ETH', 'reserveRatios.ETH: must be from 0 to 1'],
    [{ USDC: 2 }, 'reserveRatios.USDC', 'reserveRatios.USDC: must be from 0 to 1'],
    [{ DAI: 1 }, 'reserveRatios.DAI', 'reserveRatios.DAI: is not a token this service takes (USDC, USDT, ETH)'],
    [{}, 'reserveRatios', 'reserveRatios: name at least one token (USDC, USDT, ETH) with its target share, or send null for none'],
    [[0.5, 0.5], 'reserveRatios', 'reserveRatios: Invalid input: expected record, received array'],
  ])('refuses %j: 400 invalid_input naming %s', async (reserveRatios, field, message) => {
    expect(await update({ reserveRatios })).toMatchObject({ status: 400, json: { error: 'invalid_input', field, message } });
    expect((await read()).json.config).toMatchObject({ reserveRatios: null });
  });

  it('refuses a token this deployment does not accept', async () => {
    await start(false);
    expect(await update({ reserveRatios: { USDC: 0.5, ETH: 0.5 } })).toMatchObject({
      status: 400,
      json: { error: 'invalid_input', field: 'reserveRatios.ETH', message: 'reserveRatios.ETH: this deployment does not accept ETH (it accepts USDC, USDT)' },
    });
    expect((await update({ reserveRatios: { USDC: 0.5, USDT: 0.5 } })).status).toBe(200);
  });
});
