/**
 * `POST /api/console/deposits/sweep` through its handler, on the run's anvil chain: the sweepMany call
 * the merchant's own wallet sends for its paid, unswept deposits, and the recovery of a token sent to
 * a deposit address. The service sends nothing; here a fresh wallet of this file's sends it (anyone may).
 */
import { Contract, ContractFactory, Interface, NonceManager, Wallet, ZeroAddress, hexlify, parseEther, randomBytes, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { depositFactoryArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { receiptKey } from '../../shared/adapters/evm/deposit-address';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps, setDeps } from '../../shared/composition';
import { newReceipt, type Receipt, type ReceiptStatus } from '../../shared/domain/receipt';
import { chainForTests } from '../support/chain';
import { merchantRecordWithSplit, testAccounts } from '../support/chain-merchant';
import { receiptCore } from '../support/fixtures';
import { invoke } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';

const local = inject('chain');
const factoryInterface = new Interface(depositFactoryArtifact.abi);
const wallet = testWallets.merchant.address.toLowerCase();

let provider: JsonRpcProvider;
let chain: EvmChain;
let funder: NonceManager;
/** Sends the call the console hands out, as the merchant's wallet would (anyone may). */
let sender: NonceManager;
let usdc: Contract;
let split: string;
let deps: AppDeps;
let merchant: SignedInBrowser;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  const accounts = await testAccounts(provider);
  funder = accounts.funder;
  sender = new NonceManager(await accounts.newWallet());
  chain = chainForTests((await accounts.newWallet()).privateKey);
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, funder);
  split = (await chain.deploySplit([
    { address: wallet, bps: 9_900 },
    { address: Wallet.createRandom().address.toLowerCase(), bps: 100 },
  ])).address;
});
afterAll(() => {
  chain.destroy();
  provider.destroy();
});

beforeEach(async () => {
  const base = memoryDeps({ chain });
  deps = {
    ...base,
    settings: {
      ...base.settings,
      chainId: local.chainId,
      tokens: [
        { symbol: 'USDC', address: local.usdc, decimals: 6 },
        { symbol: 'ETH', address: ZeroAddress, decimals: 18 },
      ],
    },
  };
  setDeps(deps);
  await deps.merchants.upsert(wallet, merchantRecordWithSplit(wallet, { address: split, platform: Wallet.createRandom().address.toLowerCase(), txHash: '0x' + '6'.repeat(64), chainId: local.chainId }));
  merchant = await signInAs(testWallets.merchant);
});

const sweep = (body: unknown, headers = merchant.headers()) => invoke('console-deposits-sweep', { method: 'POST', path: '/api/console/deposits/sweep', headers, body });

const balanceOf = async (token: Contract | 'eth', holder: string): Promise<bigint> =>
  token === 'eth' ? provider.getBalance(holder) : (token.getFunction('balanceOf').staticCall(holder) as Promise<bigint>);

const waitFor = async (sent: Promise<{ wait(): Promise<unknown> }>) => (await sent).wait();

/** A receipt of `owner`'s with a deposit address paying into `split` (a quote went out), in `status`. */
const withDeposit = async (status: ReceiptStatus, owner = wallet): Promise<Receipt & { deposit: { address: string; split: string } }> => {
  const receiptId = `R-${hexlify(randomBytes(8)).slice(2).toUpperCase()}`;
  const address = (await chain.depositAddress(split, owner, receiptId))!;
  const receipt = newReceipt(receiptCore({ receiptId, wallet: owner, status, usd: 5 }), Date.now(), { deposit: { address, split } });
  await deps.receipts.create(owner, receipt);
  return receipt as Receipt & { deposit: { address: string; split: string } };
};

/** The deposits a call's calldata sweeps: [split, receipt key, tokens], lower-case. */
const decoded = (data: string) =>
  (factoryInterface.decodeFunctionData('sweepMany', data)[0] as Array<[string, string, string[]]>).map(([to, key, tokens]) => [to.toLowerCase(), key, tokens.map((token) => token.toLowerCase())]);
const keyOf = (receipt: Receipt) => receiptKey({ chainId: local.chainId, wallet: receipt.wallet, receiptId: receipt.receiptId });

describe('POST /api/console/deposits/sweep', () => {
  it('answers the sweepMany for the shop’s paid receipts whose deposit still holds an accepted token, which moves it all to the split', async () => {
    const paidUsdc = await withDeposit('paid');
    const paidEth = await withDeposit('paid');
    // Paid and swept already: nothing left at its address.
    await withDeposit('paid');
    const unpaid = await withDeposit('generated');
    const theirs = await withDeposit('paid', testWallets.other.address.toLowerCase());
    await waitFor(usdc.getFunction('mint').send(paidUsdc.deposit.address, 7_000_000n));
    await provider.send('anvil_setBalance', [paidEth.deposit.address, '0x' + parseEther('0.002').toString(16)]);
    await waitFor(usdc.getFunction('mint').send(unpaid.deposit.address, 1_000_000n));
    await waitFor(usdc.getFunction('mint').send(theirs.deposit.address, 1_000_000n));
    const splitBefore = [await balanceOf(usdc, split), await balanceOf('eth', split)];

    const answer = await sweep({});
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ ok: true, chainId: local.chainId, to: local.depositFactory, remaining: 0 });
    const deposits = answer.json.deposits as Array<{ receiptId: string }>;
    expect([...deposits].sort((a, b) => (a.receiptId < b.receiptId ? -1 : 1))).toEqual(
      [
        { receiptId: paidUsdc.receiptId, address: paidUsdc.deposit.address, split, tokens: [local.usdc] },
        { receiptId: paidEth.receiptId, address: paidEth.deposit.address, split, tokens: [ZeroAddress] },
      ].sort((a, b) => (a.receiptId < b.receiptId ? -1 : 1)),
    );
    const byReceipt = new Map([paidUsdc, paidEth].map((receipt) => [receipt.receiptId, receipt]));
    expect(decoded(answer.json.data as string)).toEqual(deposits.map((deposit) => [split, keyOf(byReceipt.get(deposit.receiptId)!), deposit.receiptId === paidUsdc.receiptId ? [local.usdc] : [ZeroAddress]]));

    // Sent from a wallet (the service sends nothing): the money is in the split, the unpaid receipt's and the other shop's stay.
    await waitFor(sender.sendTransaction({ to: answer.json.to as string, data: answer.json.data as string }));
    expect(await Promise.all([balanceOf(usdc, paidUsdc.deposit.address), balanceOf('eth', paidEth.deposit.address)])).toEqual([0n, 0n]);
    expect([await balanceOf(usdc, split), await balanceOf('eth', split)]).toEqual([splitBefore[0]! + 7_000_000n, splitBefore[1]! + parseEther('0.002')]);
    expect(await Promise.all([balanceOf(usdc, unpaid.deposit.address), balanceOf(usdc, theirs.deposit.address)])).toEqual([1_000_000n, 1_000_000n]);

    // Nothing left to sweep.
    expect((await sweep({})).json).toMatchObject({ ok: true, to: local.depositFactory, data: null, deposits: [], remaining: 0 });
  });

  it('recovers a token the shop does not accept from a deposit address of any receipt (or the one named) to the split, 50 deposits a call', async () => {
    const deployed = await new ContractFactory(testUsdcArtifact.abi, testUsdcArtifact.bytecode, funder).deploy();
    await deployed.waitForDeployment();
    const stray = new Contract((await deployed.getAddress()).toLowerCase(), testUsdcArtifact.abi, funder);
    const token = await stray.getAddress();
    const receipts: Receipt[] = [];
    for (let index = 0; index < 51; index++) {
      const receipt = await withDeposit(index % 2 === 0 ? 'failed' : 'paid');
      receipts.push(receipt);
      await waitFor(stray.getFunction('mint').send(receipt.deposit!.address, 1_000n + BigInt(index)));
    }
    const named = await sweep({ token, receiptId: receipts[3]!.receiptId });
    expect(named.json).toMatchObject({ deposits: [{ receiptId: receipts[3]!.receiptId, tokens: [token.toLowerCase()] }], remaining: 0 });

    const first = await sweep({ token });
    expect(first.status).toBe(200);
    expect(first.json.deposits).toHaveLength(50);
    expect(first.json.remaining).toBe(1);
    const gas = (await (await sender.sendTransaction({ to: first.json.to as string, data: first.json.data as string })).wait())!.gasUsed;
    console.log(`console sweep gas, 50 deposits of one token (deploy + sweep): ${gas} (${gas / 50n} a deposit)`);
    const second = await sweep({ token });
    expect(second.json).toMatchObject({ remaining: 0 });
    expect(second.json.deposits).toHaveLength(1);
    await waitFor(sender.sendTransaction({ to: second.json.to as string, data: second.json.data as string }));
    expect(await balanceOf(stray, split)).toBe(51n * 1_000n + (50n * 51n) / 2n);
    expect((await sweep({ token })).json).toMatchObject({ data: null, deposits: [] });
  }, 60_000);

  it('answers 400 for a bad token or a receipt without a deposit address, 404 for a receipt not the shop’s, 401 without a session, 403 without the CSRF header', async () => {
    expect(await sweep({ token: '0x1234' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'token' } });
    const plain = newReceipt(receiptCore({ receiptId: 'R-NODEPOSIT', wallet, status: 'paid', usd: 1 }), Date.now());
    await deps.receipts.create(wallet, plain);
    expect(await sweep({ receiptId: 'R-NODEPOSIT' })).toMatchObject({ status: 400, json: { error: 'invalid_input', field: 'receiptId' } });
    const theirs = await withDeposit('paid', testWallets.other.address.toLowerCase());
    expect(await sweep({ receiptId: theirs.receiptId })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect(await sweep({ receiptId: 'R-NOSUCH' })).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect((await invoke('console-deposits-sweep', { method: 'POST', path: '/api/console/deposits/sweep', body: {} })).status).toBe(401);
    const { 'x-csrf-token': _, ...noCsrf } = merchant.headers();
    expect((await sweep({}, noCsrf)).status).toBe(403);
  });

  it('answers 503 where no chain or no deposit factory is configured', async () => {
    const noFactory = new EvmChain({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: Wallet.createRandom().privateKey, splitFactory: local.splitFactory, tokens: [local.usdc] });
    try {
      for (const used of [undefined, noFactory]) {
        setDeps({ ...deps, chain: used });
        expect(await sweep({})).toMatchObject({ status: 503, json: { error: 'service_unavailable' } });
      }
    } finally {
      noFactory.destroy();
    }
  });
});
