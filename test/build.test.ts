import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../shared/http/routes';

const root = join(__dirname, '..');

describe('npm run build', () => {
  it('bundles the app into package.json "main", which registers every function when loaded', () => {
    execFileSync('node', ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
    const main = require(join(root, 'package.json')).main as string;
    // Outside the Functions host, @azure/functions names each registration it skips: one per function.
    const loaded = spawnSync('node', ['-e', `require(${JSON.stringify(join(root, main))})`], { cwd: root, encoding: 'utf8' });
    expect(loaded.status).toBe(0);
    const output = loaded.stdout + loaded.stderr;
    const registered = [...output.matchAll(/register function "([^"]+)"/g)].map((match) => match[1]);
    expect(registered.sort()).toEqual(allRoutes.map((route) => route.name).sort());
  }, 60_000);
});
