import { describe, expect, it } from 'vitest';
import { decodeBase64Url, encodeBase64Url } from '../../shared/domain/base64url';
import { decodeCursor, encodeCursor } from '../../shared/domain/cursor';

/** A small seeded generator, so a failure names an input that can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('base64url without Buffer', () => {
  const next = random(7);
  const int = (below: number) => Math.floor(next() * below);
  const bytes = (length: number) => Uint8Array.from({ length }, () => int(256));

  it('encodes as Buffer does', () => {
    for (let n = 0; n < 20_000; n++) {
      const input = bytes(int(70));
      expect(encodeBase64Url(input)).toBe(Buffer.from(input).toString('base64url'));
    }
  });

  it('decodes any text, well-formed or not, to the bytes Buffer decodes', () => {
    // Valid text of either alphabet, then edited with padding, spaces, other characters and
    // characters beyond one byte (read by their low byte).
    const junk = ['=', '==', ' ', '\n', '.', '%', '\u0000', 'é', '\u0151', '\u2615', '+', '/', '-', '_'];
    const differing: string[] = [];
    for (let n = 0; n < 200_000; n++) {
      const valid = Buffer.from(bytes(int(40))).toString(next() < 0.5 ? 'base64url' : 'base64');
      let text = valid;
      for (let edits = int(4); edits > 0; edits--) {
        const at = int(text.length + 1);
        text = text.slice(0, at) + junk[int(junk.length)] + text.slice(at + (next() < 0.3 ? 1 : 0));
      }
      if (hex(decodeBase64Url(text)) !== Buffer.from(text, 'base64url').toString('hex') && differing.length < 10) differing.push(text);
    }
    expect(differing).toEqual([]);
  });

  it('decodes short texts of any characters as Buffer does', () => {
    const alphabet = ['A', 'Q', 'w', '9', '-', '_', '+', '/', '=', '=', ' ', '\n', 'é', '\u0151', '\u2615'];
    const differing: string[] = [];
    for (let n = 0; n < 200_000; n++) {
      const text = Array.from({ length: int(10) }, () => alphabet[int(alphabet.length)]).join('');
      if (hex(decodeBase64Url(text)) !== Buffer.from(text, 'base64url').toString('hex') && differing.length < 10) differing.push(text);
    }
    expect(differing).toEqual([]);
  });

  it('carries cursors, and reads one another encoder padded', () => {
    const cursor = encodeCursor(1_700_000_000_000, 'order-1001 ☕');
    expect(cursor).toBe(Buffer.from(JSON.stringify([1_700_000_000_000, 'order-1001 ☕'])).toString('base64url'));
    expect(decodeCursor(cursor)).toEqual({ createdAt: 1_700_000_000_000, id: 'order-1001 ☕' });
    expect(decodeCursor(Buffer.from(JSON.stringify([5, 'a'])).toString('base64'))).toEqual({ createdAt: 5, id: 'a' });
    expect(() => decodeCursor(Buffer.from('\uFEFF[5,"a"]').toString('base64url'))).toThrow('is not a cursor');
    expect(() => decodeCursor('not a cursor')).toThrow('is not a cursor');
  });
});
