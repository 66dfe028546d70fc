/**
 * The startup check against the run's anvil chain: the configuration the local stack makes passes; a
 * node on another chain, an address without code, a token with other decimals or another symbol, a
 * feed of another kind are each named by their setting, all of them in the one error that stops the
 * start; a node that does not answer is logged once and the start goes on. Without a chain nothing is read.
 */
import { ContractFactory } from 'ethers';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import reentrantToken from '../../contracts/artifacts/ReentrantToken.json';
import { createProvider } from '../../shared/adapters/evm/provider';
import { checkAtStart, checkChain } from '../../shared/composition';
import { loadConfig } from '../../shared/config';
import { freePort } from '../../scripts/local/servers';
import { testAccounts } from '../support/chain-merchant';

const chain = inject('chain');
/** As the local stack configures its chain (scripts/local/stack.ts). */
const local = {
  STORE: 'memory',
  APP_ENV: 'development',
  CHAIN_NETWORK: 'local',
  CHAIN_RPC_URL: chain.rpcUrl,
  RELAYER_PRIVATE_KEY: chain.relayerKey,
  SPLIT_FACTORY_ADDRESS: chain.splitFactory,
  DEPOSIT_FACTORY_ADDRESS: chain.depositFactory,
  USDC_ADDRESS: chain.usdc,
  USDT_ADDRESS: chain.usdt,
  ETH_USD_FEED_ADDRESS: chain.ethUsdFeed,
};
const nowhere = `0x${'5a'.repeat(20)}`;

/** The check's problems, one a line, or none when the start may go on. */
const problemsWith = async (env: Record<string, string>): Promise<string[]> => {
  try {
    await checkChain(loadConfig({ ...local, ...env }));
    return [];
  } catch (error) {
    const [head, ...lines] = (error as Error).message.split('\n');
    expect(head).toBe('the chain does not match the configuration:');
    return lines.map((line) => line.trim());
  }
};

/** An ERC-20 with 18 decimals and the symbol REN, deployed from a wallet of this file's own. */
let eighteenDecimals: string;
const provider = createProvider(chain.rpcUrl, chain.chainId);

beforeAll(async () => {
  const { funder } = await testAccounts(provider);
  const token = await new ContractFactory(reentrantToken.abi, reentrantToken.bytecode, funder).deploy();
  await token.waitForDeployment();
  eighteenDecimals = (await token.getAddress()).toLowerCase();
});
afterAll(() => provider.destroy());
afterEach(() => vi.restoreAllMocks());

describe('the startup check of the chain', () => {
  it("passes the local stack's configuration", async () => {
    expect(await problemsWith({})).toEqual([]);
  });

  it('reads nothing where no chain is configured', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch');
    await checkChain(loadConfig({ STORE: 'memory', APP_ENV: 'development', CHAIN_NETWORK: 'base' }));
    await checkAtStart({ STORE: 'memory', APP_ENV: 'development' });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('refuses a node that serves another chain than CHAIN_ID (or the network) says', async () => {
    expect(await problemsWith({ CHAIN_ID: '8453' })).toEqual(['CHAIN_ID: 8453 is configured, but CHAIN_RPC_URL serves chain 31337']);
    // Base's preset on the local node: the chain and Circle's USDC are not there (the local tokens stand in for the rest).
    const { USDC_ADDRESS: _usdc, ...withoutUsdc } = local;
    const base = { ...withoutUsdc, CHAIN_NETWORK: 'base' };
    let message = '';
    await checkChain(loadConfig(base)).catch((error: Error) => (message = error.message));
    expect(message).toMatch(/CHAIN_ID: 8453 is configured, but CHAIN_RPC_URL serves chain 31337/);
    expect(message).toMatch(/USDC_ADDRESS: no contract at 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913 on chain 31337/);
  });

  it('refuses a token or feed address without code, and a factory without code', async () => {
    expect(await problemsWith({ USDT_ADDRESS: nowhere })).toEqual([`USDT_ADDRESS: no contract at ${nowhere} on chain 31337`]);
    expect(await problemsWith({ ETH_USD_FEED_ADDRESS: nowhere })).toEqual([`ETH_USD_FEED_ADDRESS: no contract at ${nowhere} on chain 31337`]);
    expect(await problemsWith({ DEPOSIT_FACTORY_ADDRESS: nowhere })).toEqual([`DEPOSIT_FACTORY_ADDRESS: no contract at ${nowhere} on chain 31337`]);
  });

  it('refuses a token with other decimals than the service prices it in, or another symbol', async () => {
    expect(await problemsWith({ USDC_ADDRESS: eighteenDecimals })).toEqual([
      `USDC_ADDRESS: ${eighteenDecimals} has 18 decimals, not 6`,
      `USDC_ADDRESS: ${eighteenDecimals} is "REN", not USDC`,
    ]);
    // The right decimals, the wrong token: the two test tokens swapped.
    expect(await problemsWith({ USDC_ADDRESS: chain.usdt, USDT_ADDRESS: chain.usdc })).toEqual([
      `USDC_ADDRESS: ${chain.usdt} is "USDT", not USDC`,
      `USDT_ADDRESS: ${chain.usdc} is "USDC", not USDT`,
    ]);
  });

  it('refuses a feed that is no ETH/USD feed, and a token that is a feed', async () => {
    expect(await problemsWith({ ETH_USD_FEED_ADDRESS: chain.usdc })).toEqual([`ETH_USD_FEED_ADDRESS: ${chain.usdc} answers no description() (not a Chainlink feed?)`]);
    expect(await problemsWith({ USDT_ADDRESS: chain.ethUsdFeed })).toEqual([
      `USDT_ADDRESS: ${chain.ethUsdFeed} has 8 decimals, not 6`,
      `USDT_ADDRESS: ${chain.ethUsdFeed} answers no symbol()`,
    ]);
  });

  it('lists every mismatch in one error, and stops the Functions host’s start with it', async () => {
    const wrong = { CHAIN_ID: '84532', USDC_ADDRESS: eighteenDecimals, USDT_ADDRESS: nowhere, ETH_USD_FEED_ADDRESS: chain.usdt };
    expect(await problemsWith(wrong)).toEqual([
      'CHAIN_ID: 84532 is configured, but CHAIN_RPC_URL serves chain 31337',
      `USDC_ADDRESS: ${eighteenDecimals} has 18 decimals, not 6`,
      `USDC_ADDRESS: ${eighteenDecimals} is "REN", not USDC`,
      `USDT_ADDRESS: no contract at ${nowhere} on chain 31337`,
      `ETH_USD_FEED_ADDRESS: ${chain.usdt} answers no description() (not a Chainlink feed?)`,
    ]);
    await expect(checkAtStart({ ...local, ...wrong })).rejects.toThrowError(/CHAIN_ID: 84532[\s\S]*USDC_ADDRESS[\s\S]*USDT_ADDRESS[\s\S]*ETH_USD_FEED_ADDRESS/);
    await expect(checkAtStart(local)).resolves.toBeUndefined();
    // A bad variable stops it first, as every configuration error does.
    await expect(checkAtStart({ ...local, CHAIN_NETWORK: 'mainnet' })).rejects.toThrowError(/invalid configuration:[\s\S]*CHAIN_NETWORK/);
  });

  it('starts when the node does not answer (an outage, not a wrong configuration), saying so once', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const lines: string[] = [];
    await expect(checkChain(loadConfig({ ...local, CHAIN_RPC_URL: closed }), (line) => lines.push(line))).resolves.toBeUndefined();
    expect(lines).toEqual([expect.stringMatching(/^the chain was not checked at start: CHAIN_RPC_URL: the node did not answer eth_chainId \(.+\); the calls that need it answer 503 until it answers$/)]);
  });
});
