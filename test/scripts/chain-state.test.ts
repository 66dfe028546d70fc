import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_ACCOUNTS, startAnvil, type RunningAnvil } from '../../scripts/local/anvil';
import { chainStateFiles, startSavedChain, unreadableCopy, writeChainState, type SavedChainOptions } from '../../scripts/local/chain-state';
import { waitFor } from '../support/stack';

/** The local chain's saved state against real anvil processes, on loopback and free ports, each case in a folder of its own. */
const repo = resolve(__dirname, '../..');
const root = mkdtempSync(join(tmpdir(), 'chain-state-'));
const running: RunningAnvil[] = [];
afterAll(async () => {
  await Promise.all(running.map((anvil) => anvil.close()));
  rmSync(root, { recursive: true, force: true });
});

const rpc = async (url: string, method: string, params: unknown[]) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await response.json()) as { result: unknown }).result;
};
const marked = ANVIL_ACCOUNTS[9].address;
/** Its balance on a fresh chain: anvil's 10,000 ETH. */
const FRESH = 10n ** 22n;
/** The marked account's balance: which saved state a chain started from. */
const mark = async (anvil: RunningAnvil) => BigInt((await rpc(anvil.rpcUrl, 'eth_getBalance', [marked, 'latest'])) as string);
const setMark = (anvil: RunningAnvil, wei: bigint) => rpc(anvil.rpcUrl, 'anvil_setBalance', [marked, `0x${wei.toString(16)}`]);

let folders = 0;
const folder = () => {
  const dir = join(root, String(folders++));
  mkdirSync(dir);
  return { dir, file: join(dir, 'chain-state.json') };
};
const lines: string[] = [];
const start = async (options: Partial<SavedChainOptions> & { file: string }) => {
  const anvil = await startSavedChain({ saveEveryMs: 60_000, storeIsFresh: false, log: (line) => lines.push(line), ...options });
  running.push(anvil);
  return anvil;
};
const logged = (run: () => Promise<unknown>) => async () => {
  lines.length = 0;
  await run();
  return [...lines];
};

/** Two saved states of one chain: the marked account holds 1 wei in `older`, 2 wei in `newer`. */
let older = '';
let newer = '';
beforeAll(async () => {
  const anvil = await startAnvil();
  await setMark(anvil, 1n);
  older = await anvil.dumpState();
  await setMark(anvil, 2n);
  newer = await anvil.dumpState();
  await anvil.close();
}, 60_000);

describe('the local chain saved across crashes', () => {
  it('starts fresh when nothing is saved yet, saves while it runs, and a later start finds the last save', async () => {
    const { file } = folder();
    const log = logged(async () => {
      const first = await start({ file, saveEveryMs: 100, storeIsFresh: false });
      expect(await mark(first)).toBe(FRESH);
      await setMark(first, 7n);
      // The process is then killed: no close, only what the interval saved.
      await waitFor('a save', () => (existsSync(file) && readFileSync(file, 'utf8').includes('"0x7"') ? true : undefined), 10_000);
      const second = await start({ file });
      expect(await mark(second)).toBe(7n);
    });
    expect(await log()).toEqual([]);
  });

  it('keeps the save before the last one as the previous good copy, and saves once more on close', async () => {
    const { file } = folder();
    const files = chainStateFiles(file);
    writeChainState(file, older);
    expect(existsSync(files.previous)).toBe(false);
    const olderSavedAt = statSync(file).mtimeMs;
    await new Promise((resolve) => setTimeout(resolve, 50));
    writeChainState(file, newer);
    expect(readFileSync(files.previous, 'utf8')).toBe(older);
    // Its time is its own save's, which a start that goes back to it reports.
    expect(statSync(files.previous).mtimeMs).toBeCloseTo(olderSavedAt, -1);
    expect(readFileSync(file, 'utf8')).toBe(newer);
    const anvil = await start({ file });
    await setMark(anvil, 9n);
    await anvil.close();
    expect(JSON.parse(readFileSync(file, 'utf8')).accounts[marked].balance).toBe('0x9');
    expect(readFileSync(files.previous, 'utf8')).toBe(newer);
  });

  it('a process killed at any moment of its saves leaves the saved state and its previous copy whole', async () => {
    const { dir, file } = folder();
    const files = chainStateFiles(file);
    // Large saves, so that kills land inside writes and copies, not only between them.
    const saves = ['a', 'b', 'c'].map((fill) => JSON.stringify({ fill: fill.repeat(2_000_000) }));
    writeFileSync(join(dir, 'saves.json'), JSON.stringify(saves));
    const loop = `const { writeChainState } = require(${JSON.stringify(join(repo, 'scripts/local/chain-state.ts'))});
const saves = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(join(dir, 'saves.json'))}, 'utf8'));
process.send('ready', () => {
  for (let i = 0; ; i++) writeChainState(${JSON.stringify(file)}, saves[i % saves.length]);
});`;
    for (let kill = 0; kill < 3; kill++) {
      const child = spawn(process.execPath, ['--import', 'tsx', '-e', loop], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      await new Promise((ready) => child.once('message', ready));
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 300));
      const gone = new Promise((exited) => child.once('exit', exited));
      child.kill('SIGKILL');
      await gone;
      expect(saves).toContain(readFileSync(file, 'utf8'));
      if (existsSync(files.previous)) expect(saves).toContain(readFileSync(files.previous, 'utf8'));
    }
    expect(existsSync(files.previous)).toBe(true);
  }, 60_000);

  it('a save cut short leaves the saved state and its previous copy whole, and the next start loads the saved state', async () => {
    const { dir, file } = folder();
    const files = chainStateFiles(file);
    writeChainState(file, older);
    writeChainState(file, newer);
    // A crash while the temporary file was written: half of it is there.
    writeFileSync(files.temporary, newer.slice(0, newer.length / 2));
    // A save that fails part-way (here: the temporary file cannot be opened) changes neither file.
    rmSync(files.temporary);
    mkdirSync(files.temporary);
    expect(() => writeChainState(file, '{"later":true}')).toThrow();
    expect(readFileSync(file, 'utf8')).toBe(newer);
    expect(readFileSync(files.previous, 'utf8')).toBe(older);
    rmSync(files.temporary, { recursive: true });
    writeFileSync(files.temporary, newer.slice(0, newer.length / 2));
    const log = logged(async () => expect(await mark(await start({ file }))).toBe(2n));
    expect(await log()).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['chain-state.json', 'chain-state.json.tmp', 'chain-state.previous.json']);
  });

  for (const [cut, damage, reason] of [
    ['cut in half', (text: string) => text.slice(0, text.length / 2), /EOF while parsing/],
    ['empty', () => '', /EOF while parsing/],
    ['JSON but no chain state', () => '{"x":1}', /missing field `block`/],
  ] as const) {
    it(`starts from the previous good copy when the saved state is ${cut}, says so in one line, and keeps the bad file aside`, async () => {
      const { dir, file } = folder();
      const files = chainStateFiles(file);
      writeChainState(file, older);
      writeChainState(file, newer);
      writeFileSync(file, damage(newer));
      let anvil: RunningAnvil | undefined;
      const log = logged(async () => {
        anvil = await start({ file });
        expect(await mark(anvil)).toBe(1n);
      });
      const [line, ...more] = await log();
      expect(more).toEqual([]);
      expect(line).toContain(`${file} could not be read (`);
      expect(line).toMatch(reason);
      expect(line).toMatch(/started from the last good copy chain-state\.previous\.json, saved at \d{4}-\d\d-\d\dT.*; chain changes after it are lost \(kept aside: chain-state\.unreadable\.json\)$/);
      expect(line).not.toContain('\n');
      expect(readFileSync(unreadableCopy(file), 'utf8')).toBe(damage(newer));
      // The next save does not copy the bad file over the good copy.
      await anvil!.close();
      expect(readFileSync(files.previous, 'utf8')).toBe(older);
      expect(JSON.parse(readFileSync(file, 'utf8')).accounts[marked].balance).toBe('0x1');
      expect(readdirSync(dir).sort()).toEqual(['chain-state.json', 'chain-state.previous.json', 'chain-state.unreadable.json']);
    });
  }

  it('refuses to start, says why and what to do, and moves nothing, when no good copy is left and the store is not fresh', async () => {
    const { dir, file } = folder();
    const files = chainStateFiles(file);
    writeFileSync(file, newer.slice(0, 100));
    writeFileSync(files.previous, '');
    const error = await start({ file, storeIsFresh: false }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(new RegExp(`^the local chain's saved state ${file} could not be read \\([^)]*EOF while parsing[^)]*\\), nor its previous copy \\([^)]*EOF while parsing[^)]*\\), and no earlier good copy is left\\. `));
    expect(error?.message).toContain(`put a good copy of the chain back as ${file}, or delete ${dir} to start over`);
    expect(readdirSync(dir).sort()).toEqual(['chain-state.json', 'chain-state.previous.json']);
    expect(readFileSync(file, 'utf8')).toBe(newer.slice(0, 100));
  });

  it('starts a fresh chain, and says so, when no good copy is left and the store is fresh too', async () => {
    const { dir, file } = folder();
    writeFileSync(file, newer.slice(0, 100));
    let anvil: RunningAnvil | undefined;
    const log = logged(async () => {
      anvil = await start({ file, storeIsFresh: true });
      expect(await mark(anvil)).toBe(FRESH);
    });
    expect(await log()).toEqual([
      expect.stringMatching(/could not be read \([^)]*EOF while parsing.*\), and no earlier good copy is left; the store is empty too, so a fresh chain starts \(kept aside: chain-state\.unreadable\.json\)$/),
    ]);
    await anvil!.close();
    expect(readdirSync(dir).sort()).toEqual(['chain-state.json', 'chain-state.unreadable.json']);
  });

  it('starts from the previous copy when the saved state is missing (removed by hand)', async () => {
    const { file } = folder();
    writeChainState(file, older);
    writeChainState(file, newer);
    rmSync(file);
    const log = logged(async () => expect(await mark(await start({ file }))).toBe(1n));
    expect(await log()).toEqual([expect.stringMatching(/could not be read \(it is missing\): started from the last good copy chain-state\.previous\.json, saved at [^;]+; chain changes after it are lost$/)]);
  });
});
