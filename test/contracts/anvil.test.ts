import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContractFactory, Wallet, getCreateAddress } from 'ethers';
import { afterAll, describe, expect, it } from 'vitest';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID, startAnvil, type RunningAnvil } from '../../scripts/local/anvil';
import { splitFactoryArtifact, testUsdcArtifact, testUsdtArtifact } from '../../shared/adapters/evm/artifacts';
import { EvmChain } from '../../shared/adapters/evm/chain';
import { startSavedChain } from '../../scripts/local/chain-state';
import { deployLocalContracts } from '../../scripts/local/deploy-contracts';
import { createProvider } from '../../shared/adapters/evm/provider';

const dir = mkdtempSync(join(tmpdir(), 'anvil-state-'));
const stateFile = join(dir, 'chain', 'state.json');
const running: RunningAnvil[] = [];
afterAll(async () => {
  await Promise.all(running.map((anvil) => anvil.close()));
  rmSync(dir, { recursive: true, force: true });
});

const start = async () => {
  const anvil = await startSavedChain({ file: stateFile, saveEveryMs: 60_000, storeIsFresh: true, log: () => {} });
  running.push(anvil);
  return anvil;
};

const relayer = ANVIL_ACCOUNTS[0];
const payees = [
  { address: ANVIL_ACCOUNTS[1].address, bps: 9000 },
  { address: ANVIL_ACCOUNTS[2].address, bps: 1000 },
];

describe('the local chain with a state file', () => {
  it('keeps deployed contracts, balances and creation logs across a restart', async () => {
    const first = await start();
    expect(first.chainId).toBe(ANVIL_CHAIN_ID);
    expect(first.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const contracts = await deployLocalContracts(first.rpcUrl, relayer.privateKey);
    const chainOn = (anvil: RunningAnvil) =>
      new EvmChain({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, relayerPrivateKey: relayer.privateKey, splitFactory: contracts.splitFactory, tokens: [contracts.usdc] });
    const before = chainOn(first);
    const split = await before.deploySplit(payees);
    expect(split.created).toBe(true);
    before.destroy();
    await first.close();
    expect(statSync(stateFile).size).toBeGreaterThan(0);

    const second = await start();
    expect(second.rpcUrl).not.toBe(first.rpcUrl);
    const provider = createProvider(second.rpcUrl, second.chainId);
    for (const address of Object.values(contracts)) expect(await provider.getCode(address)).not.toBe('0x');
    // deployLocalContracts finds the contracts again and sends nothing.
    expect(await deployLocalContracts(second.rpcUrl, relayer.privateKey)).toEqual(contracts);
    // The three relayer contracts, the deposit factory (through the CREATE2 deployer) and the split above.
    expect(await provider.getTransactionCount(relayer.address)).toBe(5);
    const after = chainOn(second);
    expect(await after.readSplit(split.address)).toEqual(payees);
    expect(await after.deploySplit(payees)).toEqual({ ...split, created: false });
    after.destroy();
    provider.destroy();
    // Two chain starts, every local contract and the buyers' funding: slow on a busy two-core machine.
  }, 120_000);

  it('adds the deposit factory to a chain saved before it existed, keeping every other address', async () => {
    const anvil = await startAnvil();
    running.push(anvil);
    const provider = createProvider(anvil.rpcUrl, anvil.chainId);
    const deployer = new Wallet(relayer.privateKey, provider);
    // What an earlier deployment left: the relayer's first three contracts, then its later transactions.
    for (const artifact of [testUsdcArtifact, testUsdtArtifact, splitFactoryArtifact]) {
      await (await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy()).waitForDeployment();
    }
    await (await deployer.sendTransaction({ to: ANVIL_ACCOUNTS[1].address, value: 1n })).wait();
    const contracts = await deployLocalContracts(anvil.rpcUrl, relayer.privateKey);
    expect([contracts.usdc, contracts.usdt, contracts.splitFactory]).toEqual([0, 1, 2].map((nonce) => getCreateAddress({ from: relayer.address, nonce }).toLowerCase()));
    expect(await provider.getCode(contracts.depositFactory)).not.toBe('0x');
    expect(await deployLocalContracts(anvil.rpcUrl, relayer.privateKey)).toEqual(contracts);
    provider.destroy();
  }, 60_000);

  it('stops the process on close', async () => {
    const anvil = await startAnvil();
    await anvil.close();
    await expect(fetch(anvil.rpcUrl, { method: 'POST' })).rejects.toThrow();
    await anvil.close(); // a second close is harmless
  });
});
