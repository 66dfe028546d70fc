/**
 * Every unit that reached a shop, and whose it is, on the run's chain through the real EVM adapter:
 * a receipt paid at its deposit address and a stray that overpays it after, a receipt paid in ETH, an
 * x402 order settled to the split, a stray USDC transfer straight to the split, a token the shop does
 * not accept and stray ETH sent to a deposit address, and the sweep of the deposit addresses into the
 * split. Over the block range, per token, the chain's inflows equal the payments recorded on the
 * receipts plus the unattributed, to the unit; `GET /api/split/transactions` lists each transfer with
 * its attribution.
 */
import { Contract, ContractFactory, Wallet, ZeroAddress, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { depositFactoryArtifact, testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import type { EvmChain } from '../../shared/adapters/evm/chain';
import { receiptKey } from '../../shared/adapters/evm/deposit-address';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { listSplitTransactions, reconcileInflows } from '../../shared/app/inflows';
import { upsertInventoryItem } from '../../shared/app/inventory-upsert';
import { quoteFor } from '../../shared/app/payments/portal';
import { verifyPayment } from '../../shared/app/payments/verify';
import { createReceipt } from '../../shared/app/receipts';
import { x402Order } from '../../shared/app/x402/orders';
import { InventoryUpsertInput } from '../../shared/domain/inventory';
import type { SplitTransactionView } from '../../shared/domain/inflows';
import { slugClaimId } from '../../shared/domain/shop';
import { routes } from '../../shared/http/routes';
import { merchantWithSplit, testAccounts } from '../support/chain-merchant';
import { payingDepsWithX402, protocolProof, v2ProofHeader } from '../support/x402';

const local = inject('chain');
const ETH = ZeroAddress;
let provider: JsonRpcProvider;
let chain: EvmChain;
let deps: AppDeps;
let accounts: Awaited<ReturnType<typeof testAccounts>>;
let merchant: string;
let split: string;

const erc20 = (address: string, signer: Wallet) => new Contract(address, testUsdcArtifact.abi, signer);
const mined = async (sent: Promise<{ wait(): Promise<{ hash: string; blockNumber: number } | null> }>) => (await (await sent).wait())!;

/** What happened in the range, as the test made it. */
const made = {} as {
  fromBlock: number;
  toBlock: number;
  usdcPaid: { id: string; deposit: string; amount: bigint; hash: string };
  overpaid: { hash: string; amount: bigint };
  ethPaid: { id: string; deposit: string; amount: bigint };
  x402: { id: string; hash: string; amount: bigint };
  straySplit: { hash: string; amount: bigint };
  foreign: { token: string; hash: string; amount: bigint };
  strayEth: bigint;
  sweepHash: string;
};

let serial = 0;
const newReceipt = async (totalUsd: number) => {
  const id = `inflows-${++serial}-${Date.now()}`;
  await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems: [{ label: 'Beans', priceUsd: totalUsd }], totalUsd });
  return id;
};

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  accounts = await testAccounts(provider);
  ({ chain, deps } = await payingDepsWithX402(() => accounts.newWallet()));
  ({ merchant, split } = await merchantWithSplit(deps, chain));
  const buyer = await accounts.newWallet([local.usdc]);
  made.fromBlock = (await provider.getBlockNumber()) + 1;

  // A receipt paid in USDC at its deposit address, then a stray to that address: the receipt's overpayment.
  const usdcId = await newReceipt(20);
  const usdcQuote = await quoteFor(deps, usdcId, 'USDC');
  const paid = await mined(erc20(local.usdc, buyer).getFunction('transfer')(usdcQuote.payTo, BigInt(usdcQuote.amount)));
  expect(await verifyPayment(deps, usdcId, paid.hash)).toMatchObject({ outcome: 'paid' });
  made.usdcPaid = { id: usdcId, deposit: usdcQuote.payTo, amount: BigInt(usdcQuote.amount), hash: paid.hash };
  const extra = await mined(erc20(local.usdc, buyer).getFunction('transfer')(usdcQuote.payTo, 1_234_567n));
  expect(await verifyPayment(deps, usdcId, extra.hash)).toMatchObject({ outcome: 'overpaid' });
  made.overpaid = { hash: extra.hash, amount: 1_234_567n };

  // A receipt paid in ETH at its deposit address (no log: a plain transfer).
  const ethId = await newReceipt(30);
  const ethQuote = await quoteFor(deps, ethId, 'ETH');
  const ethSent = await mined(buyer.sendTransaction({ to: ethQuote.payTo, value: BigInt(ethQuote.amount) }));
  expect(await verifyPayment(deps, ethId, ethSent.hash)).toMatchObject({ outcome: 'paid' });
  made.ethPaid = { id: ethId, deposit: ethQuote.payTo, amount: BigInt(ethQuote.amount) };

  // An agent's x402 order: settled straight to the split, claimed in the payment ledger.
  const slug = `inflows-${Date.now()}`;
  await deps.claims.create(slugClaimId(slug), { id: slugClaimId(slug), owner: merchant, createdAt: Date.now() });
  await upsertInventoryItem(deps, merchant, InventoryUpsertInput.parse({ sku: 'MUG', name: 'A mug', priceUsd: 5, stockQty: 3 }));
  const body = { shopSlug: slug, items: [{ sku: 'MUG', qty: 1 }] };
  const challenge = await x402Order(deps, new Headers(), body);
  const agent = await accounts.newWallet([local.usdc]);
  const order = await x402Order(deps, new Headers(v2ProofHeader(await protocolProof(agent.privateKey, challenge.headers['PAYMENT-REQUIRED']!))), body);
  expect(order.status).toBe(200);
  const { receiptId: x402Id, transactionHash } = (order.body as { receipt: { receiptId: string; transactionHash: string } }).receipt;
  made.x402 = { id: x402Id, hash: transactionHash, amount: BigInt((await deps.receipts.get(merchant, x402Id))!.value.amountPaid!) };

  // Strays: USDC straight to the split, a token the shop does not accept and ETH to the USDC receipt's address.
  const stranger = await accounts.newWallet([local.usdc]);
  const straySplit = await mined(erc20(local.usdc, stranger).getFunction('transfer')(split, 777_000n));
  made.straySplit = { hash: straySplit.hash, amount: 777_000n };
  const deployed = await new ContractFactory(testUsdcArtifact.abi, testUsdcArtifact.bytecode, stranger).deploy();
  await deployed.waitForDeployment();
  const foreignToken = (await deployed.getAddress()).toLowerCase();
  await mined(erc20(foreignToken, stranger).getFunction('mint')(stranger.address, 5_000_000n));
  const foreign = await mined(erc20(foreignToken, stranger).getFunction('transfer')(made.usdcPaid.deposit, 4_200_000n));
  made.foreign = { token: foreignToken, hash: foreign.hash, amount: 4_200_000n };
  made.strayEth = 10n ** 15n;
  await mined(stranger.sendTransaction({ to: made.usdcPaid.deposit, value: made.strayEth }));

  // Both deposit addresses swept to the split in one transaction, by anyone: everything they hold.
  const factory = new Contract(local.depositFactory, depositFactoryArtifact.abi, stranger);
  const keyOf = (receiptId: string) => receiptKey({ chainId: local.chainId, wallet: merchant, receiptId });
  const sweep = await mined(
    factory.getFunction('sweepMany')([
      [split, keyOf(usdcId), [local.usdc, foreignToken, ETH]],
      [split, keyOf(ethId), [ETH]],
    ]),
  );
  made.sweepHash = sweep.hash;
  made.toBlock = await provider.getBlockNumber();
}, 120_000);

afterAll(() => {
  chain?.destroy();
  provider?.destroy();
});

const range = () => ({ fromBlock: made.fromBlock, toBlock: made.toBlock });

/** Every page of the listing over the range, `limit` at a time. */
const allPages = async (limit: number, using: AppDeps = deps) => {
  const seen: SplitTransactionView[] = [];
  let cursor: string | undefined;
  let first: Awaited<ReturnType<typeof listSplitTransactions>> | undefined;
  do {
    const page = await listSplitTransactions(using, merchant, { ...range(), limit, ...(cursor && { cursor }) });
    // The answer is exactly what the route documents.
    expect(routes.splitTransactions.response.parse(JSON.parse(JSON.stringify(page)))).toEqual(JSON.parse(JSON.stringify(page)));
    first ??= page;
    seen.push(...page.transactions);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { first: first!, seen };
};

describe('what reached the shop, and whose it is', () => {
  it('per token, the chain’s inflows equal the recorded payments plus the unattributed, to the unit; sweeps are not counted twice', async () => {
    const account = await reconcileInflows(deps, merchant, range());
    expect(account).toMatchObject({ split, ...range(), balanced: true, receiptsTruncated: false });
    const usdc = made.usdcPaid.amount + made.overpaid.amount + made.x402.amount;
    expect(account.tokens).toEqual(
      [
        // USDC: the deposit payment and its overpayment, the x402 settlement; the stray to the split is nobody's.
        { token: local.usdc, inflows: (usdc + made.straySplit.amount).toString(), recorded: usdc.toString(), unattributed: made.straySplit.amount.toString(), swept: (made.usdcPaid.amount + made.overpaid.amount).toString(), difference: '0' },
        // The token the shop does not accept: all of it unattributed, and swept with the rest.
        { token: made.foreign.token, inflows: made.foreign.amount.toString(), recorded: '0', unattributed: made.foreign.amount.toString(), swept: made.foreign.amount.toString(), difference: '0' },
        // ETH: the ETH receipt's payment, and the stray at the USDC receipt's address, found by balance.
        { token: ETH, inflows: (made.ethPaid.amount + made.strayEth).toString(), recorded: made.ethPaid.amount.toString(), unattributed: made.strayEth.toString(), swept: (made.ethPaid.amount + made.strayEth).toString(), difference: '0' },
      ].sort((a, b) => (a.token < b.token ? -1 : 1)),
    );
    expect(account.unattributed.map((transfer) => [transfer.kind, transfer.token, transfer.txHash, transfer.amount, transfer.receiptId])).toEqual(
      [
        ['payment', local.usdc, made.straySplit.hash, made.straySplit.amount.toString(), null],
        ['deposit', made.foreign.token, made.foreign.hash, made.foreign.amount.toString(), made.usdcPaid.id],
      ],
    );
    expect(account.depositEth).toEqual(
      expect.arrayContaining([
        { address: made.usdcPaid.deposit, receiptId: made.usdcPaid.id, received: made.strayEth.toString(), recorded: '0', unattributed: made.strayEth.toString() },
        { address: made.ethPaid.deposit, receiptId: made.ethPaid.id, received: made.ethPaid.amount.toString(), recorded: made.ethPaid.amount.toString(), unattributed: '0' },
      ]),
    );
  });

  it('holds the records against the chain and the ledger: a claimed transfer left unrecorded, or a record of a transfer that never came, is a difference', async () => {
    const stored = (await deps.receipts.get(merchant, made.usdcPaid.id))!.value;
    /** The deps with the USDC receipt's records replaced, as the receipts are read for the account. */
    const withRecords = (payments: NonNullable<typeof stored.payments>): AppDeps => {
      const receipts = Object.assign(Object.create(deps.receipts) as AppDeps['receipts'], {
        listByWallet: async (wallet: string, query: Parameters<AppDeps['receipts']['listByWallet']>[1]) => {
          const page = await deps.receipts.listByWallet(wallet, query);
          return { ...page, receipts: page.receipts.map((receipt) => (receipt.receiptId === made.usdcPaid.id ? { ...receipt, payments } : receipt)) };
        },
      });
      return { ...deps, receipts };
    };
    const usdcOf = (account: Awaited<ReturnType<typeof reconcileInflows>>) => account.tokens.find((token) => token.token === local.usdc)!;

    // The ledger gave the overpayment's transfer to the receipt, but its record is gone: still the receipt's, and short by its amount.
    const unrecorded = await reconcileInflows(withRecords((stored.payments ?? []).filter((record) => record.txHash !== made.overpaid.hash)), merchant, range());
    expect(unrecorded.balanced).toBe(false);
    expect(usdcOf(unrecorded).difference).toBe(made.overpaid.amount.toString());
    expect(unrecorded.unattributed.map((transfer) => transfer.txHash)).not.toContain(made.overpaid.hash);

    // A record of a transfer that never came.
    const invented = await reconcileInflows(withRecords([...(stored.payments ?? []), { ...stored.payments![0]!, txHash: '0x' + 'ee'.repeat(32), amount: '5' }]), merchant, range());
    expect(invented.balanced).toBe(false);
    expect(usdcOf(invented).difference).toBe('-5');
  });

  it('GET /api/split/transactions lists each transfer in with whose it is, the same a page at a time', async () => {
    const { first, seen } = await allPages(200);
    expect(first).toMatchObject({ split, ...range(), receiptsTruncated: false, nextCursor: null });
    const entry = (hash: string, token = local.usdc) => seen.filter((transfer) => transfer.txHash === hash && transfer.token === token);
    expect(entry(made.usdcPaid.hash)).toEqual([expect.objectContaining({ kind: 'deposit', to: made.usdcPaid.deposit, amount: made.usdcPaid.amount.toString(), attribution: 'payment', receiptId: made.usdcPaid.id })]);
    expect(entry(made.overpaid.hash)).toEqual([expect.objectContaining({ kind: 'deposit', attribution: 'payment', receiptId: made.usdcPaid.id })]);
    expect(entry(made.x402.hash)).toEqual([expect.objectContaining({ kind: 'payment', to: split, amount: made.x402.amount.toString(), attribution: 'payment', receiptId: made.x402.id })]);
    expect(entry(made.straySplit.hash)).toEqual([expect.objectContaining({ kind: 'payment', to: split, attribution: 'unattributed', receiptId: null })]);
    expect(entry(made.foreign.hash, made.foreign.token)).toEqual([expect.objectContaining({ kind: 'deposit', to: made.usdcPaid.deposit, attribution: 'unattributed', receiptId: made.usdcPaid.id })]);
    // The sweep: every token out of both addresses into the split, each naming its receipt.
    expect(seen.filter((transfer) => transfer.txHash === made.sweepHash).map((transfer) => [transfer.kind, transfer.token, transfer.from, transfer.attribution, transfer.receiptId, transfer.amount]).sort()).toEqual(
      [
        ['payment', local.usdc, made.usdcPaid.deposit, 'sweep', made.usdcPaid.id, (made.usdcPaid.amount + made.overpaid.amount).toString()],
        ['payment', made.foreign.token, made.usdcPaid.deposit, 'sweep', made.usdcPaid.id, made.foreign.amount.toString()],
        ['payment', ETH, made.usdcPaid.deposit, 'sweep', made.usdcPaid.id, made.strayEth.toString()],
        ['payment', ETH, made.ethPaid.deposit, 'sweep', made.ethPaid.id, made.ethPaid.amount.toString()],
      ].sort(),
    );
    expect(first.depositEth.find((row) => row.address === made.usdcPaid.deposit)).toMatchObject({ unattributed: made.strayEth.toString() });
    // Oldest first, and page by page the same list.
    expect(seen.map((transfer) => [transfer.blockNumber, transfer.logIndex])).toEqual([...seen].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex).map((transfer) => [transfer.blockNumber, transfer.logIndex]));
    expect((await allPages(2)).seen).toEqual(seen);
  });

  it('a shop with more receipts than are read says so: its older deposit addresses are left out', async () => {
    const page = await listSplitTransactions(deps, merchant, { ...range(), limit: 200 }, { maxReceipts: 1 });
    expect(page.receiptsTruncated).toBe(true);
  });
});
