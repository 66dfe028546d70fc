import { Wallet, parseEther, type JsonRpcProvider } from 'ethers';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createProvider, createRelayer } from '../../shared/adapters/evm/provider';
import { publicClientFor, relayerWalletFor } from '../../shared/adapters/x402/chain-clients';
import { relayerTurn } from '../../shared/adapters/evm/relayer-turn';
import { testAccounts } from '../support/chain-merchant';

/**
 * Every sender of the relayer's key in one process takes its turn at one queue and reads the
 * account's pending nonce when its turn comes: two signers of one key (the split and distribution
 * signer, the x402 settler, another chain adapter of the same key) never hand the node the same
 * nonce, and a nonce another process took meanwhile is taken again fresh.
 */
const local = inject('chain');
let provider: JsonRpcProvider;
let key: string;

beforeAll(async () => {
  provider = createProvider(local.rpcUrl, local.chainId);
  const accounts = await testAccounts(provider);
  key = (await accounts.newWallet()).privateKey;
});
afterAll(() => provider.destroy());

const send = (signer: ReturnType<typeof createRelayer>, to: string) => signer.sendTransaction({ to, value: 1n }).then((tx) => tx.wait());

describe('the relayer key in one process', () => {
  it('two signers of the same key, used in turns and at once, never clash ("nonce too low")', async () => {
    const [first, second] = [createRelayer(key, createProvider(local.rpcUrl, local.chainId)), createRelayer(key, createProvider(local.rpcUrl, local.chainId))];
    const to = Wallet.createRandom().address;
    // In turns: each signer's own count would be stale after the other's send.
    for (let round = 0; round < 3; round++) {
      expect((await send(first, to))!.status).toBe(1);
      expect((await send(second, to))!.status).toBe(1);
    }
    // At once, from both.
    const receipts = await Promise.all(Array.from({ length: 10 }, (_, n) => send(n % 2 ? first : second, to)));
    expect(receipts.every((receipt) => receipt!.status === 1)).toBe(true);
    expect(await provider.getBalance(to)).toBe(16n);
  });

  it('the x402 settler’s sends (viem) and the chain adapter’s (ethers) share the turn', async () => {
    const signer = createRelayer(key, createProvider(local.rpcUrl, local.chainId));
    const endpoint = { rpcUrl: local.rpcUrl, chainId: local.chainId };
    const client = publicClientFor(endpoint);
    const wallet = relayerWalletFor(endpoint, key);
    const to = Wallet.createRandom().address as Hex;
    const viemSend = () =>
      relayerTurn(wallet.account.address, async () => {
        const nonce = await client.getTransactionCount({ address: wallet.account.address, blockTag: 'pending' });
        const prepared = await wallet.prepareTransactionRequest({ to, value: 1n, nonce, account: wallet.account, chain: wallet.chain } as never);
        return client.sendRawTransaction({ serializedTransaction: await wallet.signTransaction(prepared as never) });
      });
    const hashes = await Promise.all([...Array.from({ length: 5 }, viemSend), ...Array.from({ length: 5 }, () => signer.sendTransaction({ to, value: 1n }).then((tx) => tx.hash as Hex))]);
    for (const hash of hashes) expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await provider.getBalance(to)).toBe(10n);
    await provider.send('anvil_setBalance', [to, '0x' + parseEther('0').toString(16)]);
  });
});
