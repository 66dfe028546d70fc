import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compose } from '../shared/composition';
import { loadConfig } from '../shared/config';
import { allRoutes } from '../shared/http/routes';
import { queueFunctions, timerFunctions } from '../shared/triggers/registration';
import '../scripts/local/functions';

const root = join(__dirname, '..');
const main = (): string => require(join(root, 'package.json')).main;

/**
 * A Node process that loads the built app as the Functions worker does: `@azure/functions-core`
 * (which the worker provides) records each registered handler, the entry is loaded (`import()` for
 * an ES module, `require` otherwise), then the handlers are called with the requests named on the
 * command line, in order. Prints one JSON line: the registered names, each answer (with what the
 * handler logged), and the files of dist/ read by loading the entry and by the end of the calls.
 * `--load-every-file` then also loads every other file of the build on its own.
 */
const workerScript = String.raw`
const Module = require('node:module');
const { readdirSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');
const { pathToFileURL } = require('node:url');
const [entry, callsJson, ...flags] = process.argv.slice(1);
const dist = dirname(entry);
const handlers = new Map();
const core = {
  registerFunction: (metadata, handler) => { handlers.set(metadata.name, handler); return { dispose() {} }; },
  registerHook: () => ({ dispose() {} }),
  setProgrammingModel() {},
};
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === '@azure/functions-core' ? core : load.call(this, request, ...rest);
};
const distFilesRead = () => Object.keys(require.cache).filter((file) => file.startsWith(dist + '/')).map((file) => relative(dist, file)).sort();
const invoke = async ({ name, method = 'GET', path, body, signIn }) => {
  const { HttpRequest, InvocationContext } = require('@azure/functions');
  if (signIn) body = await signedSignIn(answers.at(-1).body);
  const request = new HttpRequest({
    method,
    url: 'http://localhost:7071' + path,
    headers: body === undefined ? {} : { 'content-type': 'application/json', origin: 'http://localhost:7071' },
    ...(body !== undefined && { body: { string: JSON.stringify(body) } }),
  });
  const logs = [];
  const logHandler = (level, ...args) => logs.push(level + ': ' + args.map((arg) => (arg instanceof Error ? arg.stack : String(arg))).join(' '));
  const response = await handlers.get(name)(request, new InvocationContext({ functionName: name, logHandler }));
  const cookies = (response.cookies ?? []).map((cookie) => cookie.name);
  return { status: response.status ?? 200, body: JSON.parse(String(response.body)), cookies, logs };
};
/** An EIP-4361 message for the nonce answer before it, signed by a new wallet. */
const signedSignIn = async ({ nonce, domain, uri, chainId }) => {
  const { Wallet } = require('ethers');
  const { SiweMessage } = require('siwe');
  const wallet = Wallet.createRandom();
  const message = new SiweMessage({ domain, address: wallet.address, uri, version: '1', chainId, nonce, issuedAt: new Date().toISOString() }).prepareMessage();
  return { message, signature: await wallet.signMessage(message) };
};
const answers = [];
(async () => {
  if (entry.endsWith('.mjs')) await import(pathToFileURL(entry).href);
  else require(entry);
  const readAtLoad = distFilesRead();
  for (const call of JSON.parse(callsJson)) answers.push(await invoke(call));
  const readByCalls = distFilesRead();
  const loadedOnTheirOwn = [];
  if (flags.includes('--load-every-file')) {
    const files = readdirSync(dist, { recursive: true }).filter((file) => /\.(c?js|mjs)$/.test(file) && !file.startsWith('bench-server') && !file.startsWith('web/'));
    for (const file of files.sort()) {
      if (file.endsWith('.mjs')) await import(pathToFileURL(join(dist, file)).href);
      else require(join(dist, file));
      loadedOnTheirOwn.push(file);
    }
  }
  // Exit once the line is written: stdout is a pipe, and an exit right after a large write cuts it short.
  process.stdout.write(JSON.stringify({ registered: [...handlers.keys()], answers, readAtLoad, readByCalls, loadedOnTheirOwn }) + '\n', () => process.exit(0));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

interface Call {
  name: string;
  method?: string;
  path: string;
  body?: unknown;
  /** The body: a message for the nonce the previous call answered, signed by a new wallet. */
  signIn?: true;
}
interface WorkerRun {
  registered: string[];
  /** Each answer, with what the handler logged (its failures, if any). */
  answers: { status: number; body: Record<string, unknown>; cookies: string[]; logs: string[] }[];
  /** Paths under dist/. */
  readAtLoad: string[];
  readByCalls: string[];
  loadedOnTheirOwn: string[];
}

const runAsWorker = async (calls: Call[], env: Record<string, string>, flags: string[] = []): Promise<WorkerRun> => {
  const args = ['-e', workerScript, join(root, main()), JSON.stringify(calls), ...flags];
  // Not this process's environment: the test runner's (BASE_URL among it) is no app setting.
  const options = { cwd: root, env: { PATH: process.env.PATH, APP_ENV: 'development', ...env }, timeout: 30_000 };
  const { stdout } = await promisify(execFile)(process.execPath, args, options).catch((error: { code?: number; stderr?: string }) => {
    const stderr = (error.stderr ?? '').split('\n').filter((line) => !line.includes('test mode'));
    throw new Error(`the worker process failed (${error.code}):\n${stderr.join('\n')}`);
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerRun;
};

const expectedFunctions = [...allRoutes.map((route) => route.name), ...queueFunctions.keys(), ...timerFunctions.keys()];
const entryFile = () => main().replace(/^dist\//, '');

describe('npm run build', () => {
  beforeAll(() => {
    execFileSync('node', ['scripts/build.mjs', '--dist-only'], { cwd: root, stdio: 'pipe' });
  }, 60_000);

  it('bundles the app into package.json "main", which registers every function when loaded', () => {
    // Outside the Functions host, @azure/functions names each registration it skips: one per function.
    const loaded = spawnSync('node', ['-e', `require(${JSON.stringify(join(root, main()))})`], { cwd: root, encoding: 'utf8' });
    expect(loaded.status).toBe(0);
    const output = loaded.stdout + loaded.stderr;
    const registered = [...output.matchAll(/register function "([^"]+)"/g)].map((match) => match[1]);
    expect(registered.sort()).toEqual([...expectedFunctions].sort());
    expect(queueFunctions.has('webhooks-deliver') && timerFunctions.has('events-relay')).toBe(true);
  }, 60_000);

  it('reads the vendored packages on first use only: sign-in loads the SIWE parser, ethers and the JWT library', async () => {
    const run = await runAsWorker(
      [
        { name: 'openapi', path: '/api/openapi.json' },
        { name: 'auth-login', method: 'POST', path: '/api/auth/login', body: { message: '', signature: '0x00' } },
        { name: 'auth-nonce', path: '/api/auth/nonce' },
        { name: 'auth-login', method: 'POST', path: '/api/auth/login', signIn: true },
      ],
      { STORE: 'memory' },
      ['--load-every-file'],
    );
    expect(run.registered.sort()).toEqual([...expectedFunctions].sort());
    // A cold start reads the entry and nothing else of dist/.
    expect(run.readAtLoad).toEqual([entryFile()]);
    const [openapi, invalid, nonce, login] = run.answers;
    expect(openapi).toMatchObject({ status: 200, body: { openapi: expect.stringMatching(/^3\.1\./) } });
    expect(Object.keys(openapi!.body.paths as object)).toContain('/api/auth/login');
    // zod's messages are in English (the only locale the bundle keeps).
    expect(invalid).toMatchObject({ status: 400, body: { error: 'invalid_input', message: expect.stringMatching(/too small/i) } });
    expect(nonce).toMatchObject({ status: 200, body: { nonce: expect.any(String) } });
    expect(login, login!.logs.join('\n')).toMatchObject({ status: 200, body: { wallet: expect.stringMatching(/^0x[0-9a-f]{40}$/) } });
    expect(login!.cookies.length).toBeGreaterThan(0);
    expect(run.readByCalls).toEqual([entryFile(), 'vendor/ethers.cjs', 'vendor/jsonwebtoken.cjs', 'vendor/siwe.cjs']);
    // Every file the build wrote for Node loads on its own: none names a file that is not there
    // (dist/web/ holds the browser's files).
    const built = readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' }).filter((file) => /\.(c?js|mjs)$/.test(file) && !file.startsWith('bench-server') && !file.startsWith('web/'));
    expect(run.loadedOnTheirOwn).toEqual(built.sort());
    expect(built).toEqual(expect.arrayContaining(['vendor/azure-apim.cjs', 'vendor/azure-identity.cjs', 'vendor/x402.cjs']));
  }, 60_000);

  it('reads the Cosmos and Queue Storage SDKs when the stores first connect', async () => {
    const database = `build-${randomUUID()}`;
    const stores = {
      COSMOS_ENDPOINT: inject('cosmosEndpoint'),
      COSMOS_KEY: inject('cosmosKey'),
      COSMOS_DATABASE: database,
      AzureWebJobsStorage: inject('queueConnectionString'),
    };
    const composition = compose(loadConfig({ ...stores, STORE_AUTO_CREATE: 'true', APP_ENV: 'development' }));
    try {
      await composition.prepare();
    } finally {
      composition.dispose();
    }
    const run = await runAsWorker([{ name: 'healthz', path: '/healthz' }], { STORE: 'cosmos', ...stores });
    expect(run.readAtLoad).toEqual([entryFile()]);
    const [health] = run.answers;
    expect(health, health!.logs.join('\n')).toMatchObject({ status: 200, body: { status: 'ok', checks: { store: 'ok', queue: 'ok' } } });
    expect(run.readByCalls).toEqual([entryFile(), 'vendor/azure-data.cjs']);
  }, 60_000);
});
