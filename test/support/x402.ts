import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { Contract, NonceManager, Wallet, toQuantity, type JsonRpcProvider } from 'ethers';
import { inject } from 'vitest';
import { testUsdcArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { inProcessSettler } from '../../shared/adapters/x402/in-process-settler';
import type { PaymentSettler } from '../../shared/ports/payment-settler';
import { x402Protocol } from '../../shared/adapters/x402/protocol';
import type { AppDeps } from '../../shared/app/deps';
import { memoryDeps } from '../../shared/composition';
import { chainWithOwnFeed, payingSettings } from './chain-merchant';
import type { PaymentPayload } from '../../shared/domain/x402';

/**
 * A v2 proof made by the protocol's own client for a challenge (its `PAYMENT-REQUIRED` header, or
 * the challenge decoded), signed with `privateKey`: what an agent with that wallet sends.
 */
export const protocolProof = async (privateKey: string, challenge: string | Parameters<x402Client['createPaymentPayload']>[0]): Promise<PaymentPayload> => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey as `0x${string}`) });
  // The local token is in no default asset list: no spending cap applies to it.
  client.setSpendControls(false);
  const required = typeof challenge === 'string' ? decodePaymentRequiredHeader(challenge) : challenge;
  return (await client.createPaymentPayload(required)) as unknown as PaymentPayload;
};

/** The header a v2 proof travels in. */
export const v2ProofHeader = (payload: PaymentPayload): Record<string, string> => ({ 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload as never) });

/** A fresh account of the calling file's own with 100 ETH on `provider`'s chain (nobody else counts its nonces). */
export const fundedAccount = async (provider: JsonRpcProvider) => {
  const wallet = Wallet.createRandom();
  await provider.send('anvil_setBalance', [wallet.address, toQuantity(10n ** 20n)]);
  return wallet;
};

/**
 * The run's anvil chain as the x402 tests use it: a provider, the test USDC behind a funder of the
 * file's own (it mints), and the protocol's facilitator in process with a relayer of the file's own.
 */
export const x402TestChain = async () => {
  const local = inject('chain');
  const provider = createProvider(local.rpcUrl, local.chainId);
  const funder = new NonceManager((await fundedAccount(provider)).connect(provider));
  const usdc = new Contract(local.usdc, testUsdcArtifact.abi, funder);
  const settler: PaymentSettler = inProcessSettler({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: (await fundedAccount(provider)).privateKey });
  return { provider, funder, usdc, settler };
};

/**
 * Memory deps that take payments on the run's chain (a feed and a relayer of the caller's own, from
 * `fresh`) and settle x402 in process: what a test of paid receipts of every kind needs.
 */
export const payingDepsWithX402 = async (fresh: () => Promise<Wallet>) => {
  const local = inject('chain');
  const own = await chainWithOwnFeed(fresh);
  const relayer = await fresh();
  const base = memoryDeps({ chain: own.chain });
  const deps: AppDeps = memoryDeps({
    chain: own.chain,
    settler: inProcessSettler({ rpcUrl: local.rpcUrl, chainId: local.chainId, relayerPrivateKey: relayer.privateKey }),
    x402: x402Protocol({ rpcUrl: local.rpcUrl, chainId: local.chainId }),
    settings: { ...payingSettings(base.settings, own.ethUsdFeed), baseUrl: 'http://localhost:7071' },
  });
  return { chain: own.chain, deps };
};
