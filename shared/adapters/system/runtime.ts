import { randomBytes } from 'node:crypto';
import type { Clock, Ids } from '../../ports/runtime';

/** The production clock and identifiers: the system's time and its cryptographic random source. */
export const systemClock: Clock = { now: () => Date.now() };

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

const base32 = (bytes: Buffer): string => {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
};

export const randomIds: Ids = {
  random: (bytes = 10) => base32(randomBytes(bytes)),
  apiKey: () => `sk_${randomBytes(24).toString('base64url')}`,
};
