import { Contract, NonceManager, Signature, Wallet, hexlify, isError, randomBytes, type JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../scripts/local/anvil';
import { testUsdcArtifact, testUsdtArtifact } from '../../shared/adapters/evm/artifacts';
import { createProvider } from '../../shared/adapters/evm/provider';
import { transferWithAuthorization } from '../support/eip3009';

const local = inject('chain');
// This file's own sender; the payer only signs.
const relayerAccount = ANVIL_ACCOUNTS[7];

let provider: JsonRpcProvider;
let usdc: Contract;
let usdt: Contract;

beforeAll(() => {
  provider = createProvider(local.rpcUrl, local.chainId);
  const relayer = new NonceManager(new Wallet(relayerAccount.privateKey, provider));
  usdc = new Contract(local.usdc, testUsdcArtifact.abi, relayer);
  usdt = new Contract(local.usdt, testUsdtArtifact.abi, relayer);
});
afterAll(() => provider.destroy());


describe('test tokens', () => {
  it('have 6 decimals and the names payers expect', async () => {
    expect(await usdc.getFunction('decimals').staticCall()).toBe(6n);
    expect(await usdc.getFunction('name').staticCall()).toBe('USD Coin');
    expect(await usdc.getFunction('symbol').staticCall()).toBe('USDC');
    expect(await usdt.getFunction('decimals').staticCall()).toBe(6n);
    expect(await usdt.getFunction('symbol').staticCall()).toBe('USDT');
  });

  it('USDC moves a payment signed with EIP-3009 (domain "USD Coin", version "2") once, whoever submits it', async () => {
    const payer = Wallet.createRandom();
    const payee = Wallet.createRandom().address;
    await (await usdc.getFunction('mint').send(payer.address, 2_500_000n)).wait();
    const now = Math.floor(Date.now() / 1000);
    const authorization = { from: payer.address, to: payee, value: 1_250_000n, validAfter: 0, validBefore: now + 600, nonce: hexlify(randomBytes(32)) };
    const domain = { name: 'USD Coin', version: '2', chainId: local.chainId, verifyingContract: local.usdc };
    const { v, r, s } = Signature.from(await payer.signTypedData(domain, { TransferWithAuthorization: transferWithAuthorization }, authorization));
    const args = [...Object.values(authorization), v, r, s];

    expect(await usdc.getFunction('authorizationState').staticCall(payer.address, authorization.nonce)).toBe(false);
    await (await usdc.getFunction('transferWithAuthorization').send(...args)).wait();
    expect(await usdc.getFunction('balanceOf').staticCall(payee)).toBe(1_250_000n);
    expect(await usdc.getFunction('balanceOf').staticCall(payer.address)).toBe(1_250_000n);
    expect(await usdc.getFunction('authorizationState').staticCall(payer.address, authorization.nonce)).toBe(true);

    const replay = await usdc.getFunction('transferWithAuthorization').staticCall(...args).catch((error: unknown) => error);
    expect(isError(replay, 'CALL_EXCEPTION') && replay.revert?.name).toBe('ERC3009UsedAuthorization');
    // A signature over another amount does not move this one.
    const tampered = [...args];
    tampered[2] = 2_000_000n;
    const forged = await usdc.getFunction('transferWithAuthorization').staticCall(...tampered).catch((error: unknown) => error);
    expect(isError(forged, 'CALL_EXCEPTION') && forged.revert?.name).toBe('ERC3009InvalidSignature');
  });
});
