import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonRpcProvider } from 'ethers';
import { afterAll, describe, expect, it } from 'vitest';
import { call, root, stackEnv, stopStack, tsx, waitFor, type StartedStack } from '../support/stack';

/**
 * `npm start` after a crash that cut the saved chain short (a stack killed while it saved), in a data
 * folder of its own: the file is cut in half by hand, as such a crash leaves it.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'crash-e2e-'));
const env = stackEnv(dataDir);
const chainFile = join(dataDir, 'chain-state.json');
const previousFile = join(dataDir, 'chain-state.previous.json');
const storeFile = join(dataDir, 'store.json');

/** The stack started as a user would, or, when it exits instead, its exit code and output. */
const start = async (): Promise<StartedStack | { exitCode: number | null; output: string }> => {
  const child = spawn(tsx, ['scripts/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  let exitCode: number | null | undefined;
  child.once('exit', (code) => (exitCode = code));
  await waitFor('the start banner or an exit', () => (/Demo API key\s+\S+/.test(output) || exitCode !== undefined ? true : undefined), 90_000);
  if (exitCode !== undefined) return { exitCode, output };
  const stack: StartedStack = { child, output: () => output, baseUrl: /Service running at (\S+)/.exec(output)![1]!, apiKey: /Demo API key\s+(\S+)/.exec(output)![1]! };
  running.push(stack);
  return stack;
};
const started = (result: Awaited<ReturnType<typeof start>>): StartedStack => {
  if (!('child' in result)) throw new Error(`the stack did not start (exit ${result.exitCode}):\n${result.output}`);
  return result;
};
/**
 * Ctrl-C as a terminal sends it, to the stack's own process (named in stack.json) rather than to the
 * tsx wrapper: the wrapper kills a child that does not confirm a relayed signal within 30 ms, which a
 * loaded machine misses.
 */
const stop = (stack: StartedStack) =>
  new Promise<number | null>((done) => {
    if (stack.child.exitCode !== null) return done(stack.child.exitCode);
    stack.child.once('exit', (code) => done(code));
    process.kill(JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')).pid as number, 'SIGINT');
  });
const cutInHalf = (file: string) => truncateSync(file, Math.floor(statSync(file).size / 2));
const rpcOf = () => JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')).chainRpcUrl as string;

const running: StartedStack[] = [];
afterAll(async () => {
  for (const stack of running) if (stack.child.exitCode === null) await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start after a crash cut the saved chain short', () => {
  let splitAddress = '';

  it('starts from the last good copy, says so in one line, and keeps the split the store names', async () => {
    const first = started(await start());
    splitAddress = ((await call(first.baseUrl, '/api/split/deploy', { key: first.apiKey })).json.split as { address: string }).address;
    expect(await stop(first)).toBe(0);
    // A second run saves again: the first run's save is kept as the previous good copy.
    expect(await stop(started(await start()))).toBe(0);
    expect(existsSync(previousFile)).toBe(true);

    cutInHalf(chainFile);
    const recovered = started(await start());
    const notices = recovered.output().split('\n').filter((line) => line.includes('chain-state'));
    expect(notices).toEqual([expect.stringMatching(/could not be read .*EOF.*: started from the last good copy .*chain-state\.previous\.json/)]);
    expect(await new JsonRpcProvider(rpcOf()).getCode(splitAddress)).not.toBe('0x');
    expect((await call(recovered.baseUrl, '/api/split/deploy', { key: recovered.apiKey })).json.split).toMatchObject({ address: splitAddress });
    expect(await stop(recovered)).toBe(0);
    // The cut file is kept aside, and the next start is a plain one.
    expect(existsSync(join(dataDir, 'chain-state.unreadable.json'))).toBe(true);
    const again = started(await start());
    expect(again.output()).not.toContain('chain-state');
    expect(await stop(again)).toBe(0);
  }, 240_000);

  it('explains what to do, and changes nothing, when no good copy is left and the store names splits', async () => {
    rmSync(previousFile, { force: true });
    cutInHalf(chainFile);
    const cut = readFileSync(chainFile);
    const store = readFileSync(storeFile);
    const failed = await start();
    expect(failed).toMatchObject({ exitCode: 1 });
    const { output } = failed as { output: string };
    expect(output).toMatch(/chain-state\.json could not be read .*EOF/);
    expect(output).toContain('no earlier good copy');
    expect(output).toMatch(/delete .* to start over/);
    expect(readFileSync(chainFile)).toEqual(cut);
    expect(readFileSync(storeFile)).toEqual(store);
  }, 90_000);

  it('starts a fresh chain when the store is fresh too, and says so', async () => {
    rmSync(storeFile);
    const fresh = started(await start());
    expect(fresh.output()).toMatch(/chain-state\.json could not be read .*EOF.*no earlier good copy.*a fresh chain/);
    expect(await call(fresh.baseUrl, '/healthz')).toMatchObject({ status: 200 });
    expect(await stop(fresh)).toBe(0);
  }, 90_000);
});
