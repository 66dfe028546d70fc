import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(__dirname, '../..');
const committed = join(root, 'contracts/artifacts');
const fresh = mkdtempSync(join(tmpdir(), 'artifacts-'));
afterAll(() => rmSync(fresh, { recursive: true, force: true }));

const jsonFiles = (dir: string) => readdirSync(dir).filter((file) => file.endsWith('.json')).sort();

describe('contract artifacts', () => {
  it('are exactly what a fresh compile of contracts/ produces (run npm run contracts:build after editing a contract)', async () => {
    await promisify(execFile)(process.execPath, ['scripts/contracts-build.mjs', '--out', fresh], { cwd: root });
    expect(jsonFiles(committed)).toEqual(jsonFiles(fresh));
    expect(jsonFiles(committed)).toEqual([
      'DepositFactory.json',
      'DepositForwarder.json',
      'MockAggregatorV3.json',
      'OwnedWallet.json',
      'ReentrantToken.json',
      'RejectingPayee.json',
      'Split.json',
      'SplitFactory.json',
      'TestFreezableToken.json',
      'TestUSDC.json',
      'TestUSDT.json',
    ]);
    for (const file of jsonFiles(fresh)) {
      const [ours, theirs] = [committed, fresh].map((dir) => readFileSync(join(dir, file), 'utf8'));
      const parsed = JSON.parse(ours ?? '') as { abi: unknown; bytecode: string };
      const compiled = JSON.parse(theirs ?? '') as { abi: unknown; bytecode: string };
      expect(parsed.abi, file).toEqual(compiled.abi);
      expect(parsed.bytecode, file).toBe(compiled.bytecode);
      expect(parsed.bytecode, file).toMatch(/^0x[0-9a-f]{200,}$/);
      // Byte for byte, too: the build is deterministic, so a diff in git means a real change.
      expect(ours, file).toBe(theirs);
    }
    // A full solc-js compile: seconds alone, far more on a busy two-core machine.
  }, 180_000);
});
