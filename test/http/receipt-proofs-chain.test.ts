import { chainWithOwnFeed, merchantWithSplit, payingSettings, testAccounts } from '../support/chain-merchant';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, Interface, NonceManager, Wallet, getAddress, verifyTypedData, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import type { AppDeps } from '../../shared/app/deps';
import { createReceipt } from '../../shared/app/receipts';
import { memoryDeps } from '../../shared/composition';
import type { ReceiptProof } from '../../shared/domain/receipt-proof';
import { startHost, type RunningHost } from '../support/http';
import { root } from '../support/stack';

/**
 * Receipts paid on the run's anvil chain through the service over HTTP (quote, pay from a wallet,
 * report the hash), then checked as a buyer would: the proof against the chain, and the README's
 * verify-receipt.mjs run as it stands.
 */
const chainInfo = inject('chain');
let provider: JsonRpcProvider;
let accounts: Awaited<ReturnType<typeof testAccounts>>;
let chain: EvmChain;
let deps: AppDeps;
let host: RunningHost;
let split: string;
const merchant = Wallet.createRandom().address.toLowerCase();
const dir = mkdtempSync(join(tmpdir(), 'receipt-proofs-'));

const erc20 = (address: string, signer: Wallet | NonceManager) => new Contract(address, testUsdcArtifact.abi, signer);

/** A fresh wallet with ETH for gas and 10,000 test USDC. */
const newWallet = () => accounts.newWallet([chainInfo.usdc]);

beforeAll(async () => {
  provider = createProvider(chainInfo.rpcUrl, chainInfo.chainId);
  accounts = await testAccounts(provider);
  let ethUsdFeed: string;
  ({ chain, ethUsdFeed } = await chainWithOwnFeed(newWallet));
  const base = memoryDeps({ chain });
  const settings = payingSettings(base.settings, ethUsdFeed);
  // USDC and ETH: the two kinds of payment a proof names (a token's Transfer, a value sent).
  deps = { ...base, settings: { ...settings, tokens: settings.tokens.filter((token) => token.symbol !== 'USDT') } };
  ({ split } = await merchantWithSplit(deps, chain, merchant));
  host = await startHost(deps);
}, 60_000);
afterAll(async () => {
  await host?.close();
  chain?.destroy();
  provider?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

let serial = 0;
/** A receipt paid in `token` from a fresh wallet, reported by hash: its proof, the hash and the quote. */
const paidReceipt = async (token: 'USDC' | 'ETH') => {
  const id = `proof-${token}-${++serial}-${Date.now()}`;
  const lineItems = [
    { label: 'Ceramic mug', sku: 'MUG-CERAMIC', qty: 2, priceUsd: 24 },
    { label: 'Tax', priceUsd: 1.74 },
  ];
  await createReceipt(deps, { wallet: merchant, subscriptionId: null }, { id, lineItems, totalUsd: 25.74 });
  const quoted = await host.call(`/api/portal/${id}/quote`, { method: 'POST', body: { token } });
  expect(quoted.status, JSON.stringify(quoted.json)).toBe(200);
  const quote = quoted.json.quote as { tokenAddress: string | null; payTo: string; amount: string };
  const buyer = await newWallet();
  const tx = quote.tokenAddress
    ? await erc20(quote.tokenAddress, buyer).getFunction('transfer')(quote.payTo, BigInt(quote.amount))
    : await buyer.sendTransaction({ to: quote.payTo, value: BigInt(quote.amount) });
  await tx.wait();
  const reported = await host.call(`/api/portal/${id}/payments`, { method: 'POST', body: { txHash: tx.hash } });
  expect(reported.json).toMatchObject({ outcome: 'paid', status: 'paid' });
  const proof = await host.call(`/api/portal/${id}/proof`);
  expect(proof.status).toBe(200);
  return { id, proof: proof.json as unknown as ReceiptProof, hash: tx.hash as string, quote, buyer: buyer.address };
};

/** The README's verify-receipt.mjs, exactly as printed, run from the repository's root on a proof file. */
const readmeVerifier = /```js\n(\/\/ verify-receipt\.mjs[\s\S]*?)```/.exec(readFileSync(join(root, 'README.md'), 'utf8'))?.[1];
const verifyWithReadme = (proof: unknown) => {
  const file = join(dir, `proof-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(proof));
  return new Promise<{ code: number; output: string }>((resolve, reject) => {
    const child = execFile(process.execPath, ['--input-type=module', '-', file, host.url, chainInfo.rpcUrl], { cwd: root, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, output: `${stdout}${stderr}` });
    });
    child.stdin!.end(readmeVerifier);
  });
};

describe('a receipt paid on the local chain', () => {
  it.each(['USDC', 'ETH'] as const)('in %s gets a proof whose transaction, amount, payer and deposit address are the chain’s', async (token) => {
    const { id, proof, hash, quote, buyer } = await paidReceipt(token);
    // Paid at the receipt's own address, which sweeps only to the shop's split.
    const deposit = (await deps.receipts.get(merchant, id))!.value.deposit!;
    expect(deposit.split).toBe(split);
    const signer = (await host.call('/.well-known/receipt-signer')).json as { address: string };
    expect(verifyTypedData(proof.domain, proof.types, proof.message, proof.signature)).toBe(signer.address);
    expect(proof.message).toMatchObject({ receiptId: id, merchant, transactionHash: hash.toLowerCase(), amount: quote.amount, payer: buyer.toLowerCase(), payTo: deposit.address, chainId: chainInfo.chainId, token });

    const mined = (await provider.getTransactionReceipt(hash))!;
    expect(mined.status).toBe(1);
    if (token === 'ETH') {
      const sent = (await provider.getTransaction(hash))!;
      expect({ to: getAddress(sent.to!), value: sent.value }).toEqual({ to: getAddress(deposit.address), value: BigInt(proof.message.amount) });
      expect(proof.message.tokenAddress).toBe('0x0000000000000000000000000000000000000000');
    } else {
      const transfer = new Interface(['event Transfer(address indexed from, address indexed to, uint256 value)']);
      const moved = mined.logs.filter((log) => getAddress(log.address) === getAddress(chainInfo.usdc)).map((log) => transfer.parseLog(log)!);
      expect(moved.map((event) => ({ from: event.args.from, to: event.args.to, value: event.args.value }))).toEqual([
        { from: getAddress(buyer), to: getAddress(deposit.address), value: BigInt(proof.message.amount) },
      ]);
      expect(proof.message.tokenAddress).toBe(chainInfo.usdc.toLowerCase());
    }
    // The merchant's copy is the same document.
    const receipt = await deps.receipts.get(merchant, id);
    expect(receipt!.value.proof).toEqual(proof);
  }, 60_000);

  it('passes the README’s verify-receipt.mjs, which refuses a changed proof, another receipt’s transaction and another signer, and takes a retired signer’s proof of an earlier payment', async () => {
    expect(readmeVerifier).toBeDefined();
    const { proof } = await paidReceipt('USDC');
    const { proof: other } = await paidReceipt('ETH');
    const byKey = async (key: Pick<Wallet, 'signTypedData'>, message: ReceiptProof['message']) => ({ ...proof, message, signature: await key.signTypedData(proof.domain, proof.types, message) });
    // Signed by the service's own key over facts that are not the receipt's: steps 2 and 3 catch them.
    const byService = async (message: ReceiptProof['message']) => ({ ...proof, message, signature: await deps.receiptSigner.sign({ domain: proof.domain, types: proof.types, primaryType: 'Receipt', message }) });
    const stranger = Wallet.createRandom();
    // Keys since rotated out: one retired after this payment, one at its very time.
    const [retiredAfter, retiredAt] = [Wallet.createRandom(), Wallet.createRandom()];
    deps.settings.retiredReceiptSigners.push(
      { address: retiredAfter.address.toLowerCase(), retiredAt: proof.message.paidAt + 1 },
      { address: retiredAt.address.toLowerCase(), retiredAt: proof.message.paidAt },
    );
    const notSigned = { code: 1, output: 'NOT VERIFIED: not signed by the receipt signer\n' };
    const verified = { code: 0, output: `VERIFIED: ${proof.message.receiptId} paid ${proof.message.amount} USDC to ${proof.message.payTo} in ${proof.message.transactionHash}\n` };
    // Each case is its own node process (a cold start that takes seconds on a loaded machine): they run side by side.
    const cases: Array<[string, unknown, unknown]> = [
      ['the proof as served', proof, verified],
      ['another receipt’s proof, in ETH', other, { code: 0, output: expect.stringMatching(/^VERIFIED: .* ETH to /) }],
      ['a changed amount', { ...proof, message: { ...proof.message, amount: (BigInt(proof.message.amount) + 1n).toString() } }, notSigned],
      ['signed by a stranger', await byKey(stranger, proof.message), notSigned],
      ['signed by a key retired after the payment', await byKey(retiredAfter, proof.message), verified],
      ['signed by a key retired when it was paid', await byKey(retiredAt, proof.message), notSigned],
      ['another receipt’s lines', await byService({ ...proof.message, lines: other.message.lines.map((line) => ({ ...line, priceCents: line.priceCents + 1 })) }), { code: 1, output: 'NOT VERIFIED: the lines are not the receipt’s\n' }],
      ['another receipt’s transaction', await byService({ ...proof.message, transactionHash: other.message.transactionHash }), { code: 1, output: `NOT VERIFIED: the transaction moved 0, not ${proof.message.amount}, to ${proof.message.payTo}\n` }],
    ];
    try {
      const outcomes = await Promise.all(cases.map(([, document]) => verifyWithReadme(document)));
      cases.forEach(([what, , expected], index) => expect(outcomes[index], what).toEqual(expected));
    } finally {
      deps.settings.retiredReceiptSigners.length = 0;
    }
  }, 180_000);
});
