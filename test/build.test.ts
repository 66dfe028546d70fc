import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../shared/http/routes';
import { queueFunctions, timerFunctions } from '../shared/triggers/registration';
import '../scripts/local/functions';

const root = join(__dirname, '..');

describe('npm run build', () => {
  it('bundles the app into package.json "main", which registers every function when loaded', () => {
    execFileSync('node', ['scripts/build.mjs', '--dist-only'], { cwd: root, stdio: 'pipe' });
    const main = require(join(root, 'package.json')).main as string;
    // Outside the Functions host, @azure/functions names each registration it skips: one per function.
    const loaded = spawnSync('node', ['-e', `require(${JSON.stringify(join(root, main))})`], { cwd: root, encoding: 'utf8' });
    expect(loaded.status).toBe(0);
    const output = loaded.stdout + loaded.stderr;
    const registered = [...output.matchAll(/register function "([^"]+)"/g)].map((match) => match[1]);
    const expected = [...allRoutes.map((route) => route.name), ...queueFunctions.keys(), ...timerFunctions.keys()];
    expect(registered.sort()).toEqual(expected.sort());
    expect(queueFunctions.has('webhooks-deliver') && timerFunctions.has('events-relay')).toBe(true);
  }, 60_000);
});
