/**
 * The local chain: anvil, as a child process on loopback. Used by `npm start` and the test setup.
 * The binary comes from Foundry's per-platform npm package (`@foundry-rs/anvil-linux-amd64`, an
 * optional dependency): the `@foundry-rs/anvil` wrapper lists every platform's package, and a lock
 * file that npm ci accepts needs them all resolvable, which the registry these machines use is not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { LOCAL_CHAIN_ID } from '../../shared/domain/chain-networks';
import { freePort } from './servers';

const LOOPBACK = '127.0.0.1';
export const ANVIL_CHAIN_ID = LOCAL_CHAIN_ID;

/**
 * anvil's default development accounts (from its default mnemonic, "test test … junk"), each funded
 * with 10,000 ETH on a fresh chain. PUBLIC TEST KEYS, printed by every anvil and published in the
 * Foundry docs: never use them, or send anything of value to them, on a real network.
 * Addresses are lower-case, as the service stores them.
 */
export const ANVIL_ACCOUNTS = [
  { address: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' },
  { address: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
  { address: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc', privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' },
  { address: '0x90f79bf6eb2c4f870365e785982e1f101e93b906', privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' },
  { address: '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65', privateKey: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' },
  { address: '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc', privateKey: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' },
  { address: '0x976ea74026e726554db657fa54763abd0c3a0aa9', privateKey: '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e' },
  { address: '0x14dc79964da2c08b23698b3d3cc7ca32193d9955', privateKey: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356' },
  { address: '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f', privateKey: '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97' },
  { address: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720', privateKey: '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6' },
] as const;

/** Account 0 deploys the local contracts and relays transactions (so its nonces are the relayer's). */
export const ANVIL_RELAYER = ANVIL_ACCOUNTS[0];
/**
 * Account 4 deploys the ETH/USD feed with its first transaction (so the feed's address is fixed),
 * sets its answer and mints the buyers' test tokens: none of that takes the relayer's nonces.
 */
export const ANVIL_FEED_OWNER = ANVIL_ACCOUNTS[4];
/** Accounts 5–9: buyers, each funded with test USDC and USDT (and anvil's ETH). */
export const ANVIL_BUYERS = ANVIL_ACCOUNTS.slice(5);
/**
 * The sandbox card on-ramp's funded account (the same mnemonic's account 10, beyond anvil's ten):
 * it sends the test USDC a sandbox card payment buys. Funded by the local deployment, not by anvil.
 */
export const ANVIL_ONRAMP_SANDBOX = {
  address: '0xbcd4042de499d14e55001ccbb24a551f3b954096',
  privateKey: '0xf214f2b2cd398c806f84e317254e0f0b801d0643303237d97a22a48e01628897',
} as const;

export interface AnvilOptions {
  /**
   * Start the chain from this saved state (a file `dumpState` text was written to). anvil only
   * reads it: saving is the caller's (`chain-state.ts`), since anvil's own dumps write in place.
   */
  loadState?: string;
  /**
   * Mine an empty block every this many seconds while no transaction comes, besides each transaction's
   * own block at once (anvil's mixed mining). anvil now and then answers a just-mined transaction's
   * receipt as missing (foundry-rs/foundry#10944); a client that then waits for the next block to look
   * again waits for good on an idle automining chain. The test suite's shared chain sets it.
   */
  idleBlockSeconds?: number;
}

export interface RunningAnvil {
  rpcUrl: string;
  chainId: number;
  /** The chain's whole state, as JSON text that `loadState` takes back (anvil_dumpState, unzipped). */
  dumpState(): Promise<string>;
  /** Stops anvil; resolves once it has exited. Saves nothing. */
  close(): Promise<void>;
}

/** anvil refused the `loadState` file (cut short, not a state): `reason` is its own words. */
export class AnvilStateRejected extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`anvil could not load ${file}: ${reason}`);
  }
}

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const STATE_DUMP_TIMEOUT_MS = 30_000;

/** The binary inside the platform package npm installed; nothing global, nothing downloaded. */
export const anvilBinary = (): string => {
  const require = createRequire(__filename);
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  try {
    return join(dirname(require.resolve(`${platformPackage}/package.json`)), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  } catch (cause) {
    throw new Error(
      `anvil is not installed for this platform (${platformPackage}): add it with npm install --save-optional ${platformPackage}, or set CHAIN_RPC_URL to a running node`,
      { cause },
    );
  }
};

const chainIdAt = async (rpcUrl: string): Promise<number | undefined> => {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { result?: string };
    return body.result ? Number(body.result) : undefined;
  } catch {
    return undefined;
  }
};

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

const launch = async (options: AnvilOptions): Promise<RunningAnvil | 'port_taken'> => {
  const port = await freePort();
  const args = ['--host', LOOPBACK, '--port', String(port), '--chain-id', String(ANVIL_CHAIN_ID), '--quiet'];
  if (options.loadState) args.push('--load-state', options.loadState);
  if (options.idleBlockSeconds) args.push('--mixed-mining', '--block-time', String(options.idleBlockSeconds));
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  // A parent that exits without close() must not leave a chain listening behind it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const rpcUrl = `http://${LOOPBACK}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while ((await chainIdAt(rpcUrl)) !== ANVIL_CHAIN_ID) {
    if (spawnError) {
      process.off('exit', killOnExit);
      throw new Error(`anvil could not start: ${spawnError.message}`, { cause: spawnError });
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      process.off('exit', killOnExit);
      // Its last words may still be in the pipe when the exit is seen.
      await new Promise<void>((done) => (!child.stderr || child.stderr.closed ? done() : child.stderr.once('close', done)));
      // freePort() only probes: another process may have taken the port before anvil bound it.
      if (/address already in use/i.test(stderr)) return 'port_taken';
      // The file is read while anvil parses its arguments: "invalid value '<file>' for '--load-state <PATH>': <reason>".
      const rejected = options.loadState && /--load-state[^:]*: (.+)/.exec(stderr);
      if (rejected) throw new AnvilStateRejected(options.loadState!, rejected[1]!.replaceAll(`"${options.loadState}": `, '').trim());
      throw new Error(`anvil exited before answering (code ${child.exitCode}): ${stderr.trim()}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      process.off('exit', killOnExit);
      throw new Error(`anvil did not answer on ${rpcUrl} within ${READY_TIMEOUT_MS} ms: ${stderr.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const gone = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await gone;
      clearTimeout(timer);
      process.off('exit', killOnExit);
    })());
  const dumpState = async () => {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_dumpState', params: [] }),
      signal: AbortSignal.timeout(STATE_DUMP_TIMEOUT_MS),
    });
    const body = (await response.json()) as { result?: string; error?: { message?: string } };
    if (typeof body.result !== 'string') throw new Error(`anvil_dumpState failed: ${body.error?.message ?? response.status}`);
    const bytes = Buffer.from(body.result.replace(/^0x/, ''), 'hex');
    // gzip-compressed JSON, the same document `--load-state` parses.
    return (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
  };
  return { rpcUrl, chainId: ANVIL_CHAIN_ID, dumpState, close };
};

/** Starts anvil on 127.0.0.1 and a free port, chain id 31337, and resolves once its RPC answers. */
export const startAnvil = async (options: AnvilOptions = {}): Promise<RunningAnvil> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = await launch(options);
    if (started !== 'port_taken') return started;
  }
  throw new Error('anvil could not find a free port after 3 attempts');
};
