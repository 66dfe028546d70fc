/**
 * POST /api/split/register: the split a merchant deployed from its own wallet becomes its split only
 * when the factory's split for exactly today's payees exists on chain with those payees; the relayer
 * sends nothing. A stand-in chain plays the factory (test/contracts/split.test.ts has the real one).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import type { Chain, DeployedSplit, SplitPayee } from '../../shared/ports/chain';
import { invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

const platform = '0x' + '3'.repeat(40);
const split = '0x' + '5'.repeat(40);
const created: DeployedSplit = { address: split, txHash: '0x' + 'c'.repeat(64), blockNumber: 12, created: false };

let deps: AppDeps;
let merchant: SignedInBrowser;
let onChain: { payees: SplitPayee[]; readBack?: SplitPayee[] | null } | undefined;
let relayerDeploys: number;
const asked: SplitPayee[][] = [];

const standInChain = (): Chain =>
  ({
    chainId: 31337,
    splitFactory: '0x' + 'f'.repeat(40),
    findSplit: async (payees: SplitPayee[]) => {
      asked.push(payees);
      return onChain && JSON.stringify(onChain.payees) === JSON.stringify(payees) ? created : undefined;
    },
    // readBack null: the address holds no split of the factory's (another contract, or none).
    readSplit: async () => (onChain?.readBack === null ? undefined : (onChain?.readBack ?? onChain?.payees)),
    deploySplit: async () => {
      relayerDeploys++;
      throw new Error('the relayer must not deploy');
    },
  }) as unknown as Chain;

const register = (headers: Record<string, string>) => invoke('split-register', { method: 'POST', path: '/api/split/register', headers });

beforeEach(async () => {
  onChain = undefined;
  relayerDeploys = 0;
  asked.length = 0;
  const base = memoryDeps({ chain: standInChain() });
  deps = { ...base, settings: { ...base.settings, platformWallet: platform, defaultPricing: { platformFeeBps: 150, partnerFeeBps: 0, partnerWallet: null } } };
  setDeps(deps);
  merchant = await signInAs(testWallets.merchant);
});

describe('POST /api/split/register', () => {
  it('records the split found on chain for today’s payees, and answers it again after', async () => {
    const wallet = testWallets.merchant.address.toLowerCase();
    const payees = [
      { address: wallet, bps: 9_850 },
      { address: platform, bps: 150 },
    ];
    expect((await register(merchant.headers())).json).toMatchObject({ error: 'not_found', message: expect.stringContaining(`${wallet} 9850, ${platform} 150`) });
    expect(asked.at(-1)).toEqual(payees);
    onChain = { payees };
    const answer = await register(merchant.headers());
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ ok: true, split: { address: split, txHash: created.txHash, platformFeeBps: 150, partnerFeeBps: 0, recipients: [{ address: wallet, bps: 9_850, role: 'merchant' }, { address: platform, bps: 150, role: 'platform' }] } });
    const stored = (await deps.merchants.get(wallet, wallet))!.value;
    expect(stored.split?.address).toBe(split);
    // Self-deployed: no relayer deployment counted against the daily limit.
    expect(stored.splitDeployments).toEqual([]);
    expect((await register(merchant.headers())).json).toEqual(answer.json);
    expect(relayerDeploys).toBe(0);
  });

  it('refuses a contract whose recorded payees are not the expected ones', async () => {
    const wallet = testWallets.merchant.address.toLowerCase();
    onChain = { payees: [{ address: wallet, bps: 9_850 }, { address: platform, bps: 150 }], readBack: [{ address: wallet, bps: 10_000 }] };
    expect((await register(merchant.headers())).json).toMatchObject({ error: 'conflict' });
    expect((await deps.merchants.get(wallet, wallet))?.value.split ?? null).toBeNull();
  });

  it('refuses an address where the factory’s split for the payees holds no split of ours (another contract, or none)', async () => {
    const wallet = testWallets.merchant.address.toLowerCase();
    onChain = { payees: [{ address: wallet, bps: 9_850 }, { address: platform, bps: 150 }], readBack: null };
    expect((await register(merchant.headers())).json).toMatchObject({ error: 'conflict', message: `the contract at ${split} is not a split paying your payees` });
    expect((await deps.merchants.get(wallet, wallet))?.value.split ?? null).toBeNull();
  });

  it('needs the session and its CSRF token', async () => {
    expect((await register({})).status).toBe(401);
    const { cookie, origin } = merchant.headers();
    expect((await register({ cookie: cookie!, origin: origin! })).status).toBe(403);
  });
});
