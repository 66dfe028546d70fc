import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from 'ethers';
import { afterAll, describe, expect, it } from 'vitest';
import { localReceiptSigningKey } from '../../scripts/local/signing-key';
import { DEVELOPMENT_RECEIPT_SIGNING_KEY } from '../../shared/composition';
import { loadConfig } from '../../shared/config';

const dir = mkdtempSync(join(tmpdir(), 'signing-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the local stack's receipt-signing key", () => {
  it('is made on the first start, owner-only, and the same on every later start', () => {
    const file = join(dir, 'receipt-signing-key.json');
    const key = localReceiptSigningKey(file);
    expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(key).not.toBe(DEVELOPMENT_RECEIPT_SIGNING_KEY);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ privateKey: key });
    expect(new Wallet(key).address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(localReceiptSigningKey(file)).toBe(key);
    // The configuration takes it as RECEIPT_SIGNING_KEY.
    expect(loadConfig({ STORE: 'memory', APP_ENV: 'development', RECEIPT_SIGNING_KEY: key }).RECEIPT_SIGNING_KEY).toBe(key);
  });

  it('keeps the file owner-only if its mode was widened', () => {
    const file = join(dir, 'widened.json');
    const key = localReceiptSigningKey(file);
    chmodSync(file, 0o644);
    expect(localReceiptSigningKey(file)).toBe(key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a file that holds no key, rather than signing with another one silently', () => {
    for (const [name, text] of [['empty.json', ''], ['other.json', '{"privateKey":"0x12"}'], ['zero.json', JSON.stringify({ privateKey: `0x${'0'.repeat(64)}` })], ['null.json', 'null']]) {
      const file = join(dir, name!);
      writeFileSync(file, text!, { mode: 0o600 });
      expect(() => localReceiptSigningKey(file), name).toThrow(/holds no receipt-signing key/);
    }
  });
});
