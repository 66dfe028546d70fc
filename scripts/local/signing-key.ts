/**
 * The local stack's receipt-signing key: made on the first start and kept in the data folder, readable
 * by its owner only (0600), so proofs signed on this machine keep verifying across restarts. In Azure
 * the key is a Key Vault secret (RECEIPT_SIGNING_KEY); deleting the data folder makes a new one.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

/** secp256k1's group order: a private key is 1 … n − 1. */
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const KEY = /^0x[0-9a-f]{64}$/;

const isKey = (key: unknown): key is string => typeof key === 'string' && KEY.test(key) && BigInt(key) > 0n && BigInt(key) < ORDER;

const newKey = (): string => {
  for (;;) {
    const key = `0x${randomBytes(32).toString('hex')}`;
    if (isKey(key)) return key;
  }
};

/** The key kept in `file`, made there first when there is none; a file that holds no key stops the start. */
export const localReceiptSigningKey = (file: string): string => {
  if (existsSync(file)) {
    let saved: unknown;
    try {
      saved = (JSON.parse(readFileSync(file, 'utf8')) as { privateKey?: unknown } | null)?.privateKey;
    } catch {
      saved = undefined;
    }
    if (!isKey(saved)) throw new Error(`${file} holds no receipt-signing key: delete it to make a new one (proofs signed with the old key then no longer match the published signer)`);
    // Kept owner-only even if something widened it.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return saved;
  }
  const privateKey = newKey();
  // `wx`: never over a file another start wrote meanwhile.
  writeFileSync(file, `${JSON.stringify({ privateKey }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return privateKey;
};
