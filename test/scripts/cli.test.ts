import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, tsx } from '../support/stack';

/** Runs a script as `npm run <name> -- <args>` does, and answers its exit status and output. */
const run = (script: string, args: string[], env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(tsx, [`scripts/${script}.ts`, ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });

// Each case starts tsx (seconds apiece on a loaded machine): more room than the suite's 30 s.
describe('the command-line scripts', { timeout: 90_000 }, () => {
  it.each([
    ['keys', ['create', '--wallet', '--scopes', '--plan', 'list', 'revoke', 'all', 'inventory:read', 'Exit status']],
    ['admin', ['login', '--private-key', '--base-url', 'Exit status']],
    ['bench', ['BENCH_CONNECTIONS', 'BENCH_SECONDS', 'Exit status']],
    ['price', ['<usd>', 'DATA_DIR', 'Exit status']],
    ['pay', ['<receiptId>', '--token', '--buyer', 'DATA_DIR', 'Exit status']],
  ])('npm run %s -- --help prints the usage and exits 0', async (script, mentions) => {
    const { status, stdout, stderr } = await run(script, ['--help']);
    expect(status).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(new RegExp(`^usage:\\n  npm run ${script}`));
    for (const text of mentions) expect(stdout).toContain(text);
  });

  it('takes -h for --help', async () => {
    const [short, long] = await Promise.all([run('bench', ['-h']), run('bench', ['--help'])]);
    expect(short).toEqual(long);
  });

  it('every environment variable bench reads is in its usage', async () => {
    const source = readFileSync(join(root, 'scripts/bench.ts'), 'utf8');
    const read = [...new Set([...source.matchAll(/process\.env(?:\.(\w+)|\[['"](\w+)['"]\])/g)].map((match) => match[1] ?? match[2]))];
    expect(read.length).toBeGreaterThan(0);
    const { stdout } = await run('bench', ['--help']);
    for (const name of read) expect(stdout).toContain(name);
  });

  it.each([
    ['keys', ['list', '--bogus']],
    ['keys', ['create', '--wallet', '0x' + '1'.repeat(40), '--scopes', 'all', '--plan', 'pro', '--colour', 'red']],
    ['keys', ['frobnicate']],
    ['keys', []],
    ['keys', ['create', '--wallet', '0x' + '1'.repeat(40), '--scopes', 'everything', '--plan', 'pro']],
    ['admin', ['login', '--private-key', '0x' + '1'.repeat(64), '--verbose']],
    ['admin', []],
    ['admin', ['login']],
    ['bench', ['--quick']],
    ['bench', ['now']],
    ['price', ['3000.123456789']],
    ['pay', ['R-1', '--buyer', '6']],
  ])('npm run %s -- %j: the usage on stderr, exit 2', async (script, args) => {
    const { status, stdout, stderr } = await run(script, args);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`usage:\n  npm run ${script}`);
  });

  it('bench refuses a knob that is not a positive whole number before building anything', async () => {
    const { status, stderr } = await run('bench', [], { BENCH_CONNECTIONS: 'many' });
    expect(status).toBe(2);
    expect(stderr).toMatch(/^BENCH_CONNECTIONS: /);
  });
});
