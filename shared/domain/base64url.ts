/**
 * base64url without the platform's Buffer, so that the domain runs anywhere (server, browser).
 * Encoding: the URL-safe alphabet, no padding. Decoding is as forgiving as Node's Buffer decoder,
 * byte for byte, since cursors from clients are read with it (test/domain/base64url.test.ts compares
 * them): both alphabets, anything else skipped, decoding stops at a `=`, and a character is read by
 * the low 8 bits of its code.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export const encodeBase64Url = (bytes: Uint8Array): string => {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a, b = 0, c = 0] = [bytes[i]!, bytes[i + 1], bytes[i + 2]];
    out += ALPHABET[a >> 2]! + ALPHABET[((a & 3) << 4) | (b >> 4)]!;
    if (i + 1 < bytes.length) out += ALPHABET[((b & 15) << 2) | (c >> 6)]!;
    if (i + 2 < bytes.length) out += ALPHABET[c & 63]!;
  }
  return out;
};

/** The 6-bit value of a character (by the low byte of its code), or 255 when it is none of either alphabet. */
const sextet = (code: number): number => {
  const c = code & 0xff;
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 71;
  if (c >= 48 && c <= 57) return c + 4;
  if (c === 43 || c === 45) return 62;
  if (c === 47 || c === 95) return 63;
  return 255;
};

const EQUALS = 61;

export const decodeBase64Url = (text: string): Uint8Array => {
  const length = text.length;
  // Room for the output: three bytes per four characters, up to two trailing `=` not counted, and
  // (a second bound) one byte for a lone trailing character, two for two, none for one character.
  let unpadded = length;
  if (unpadded > 0 && text.charCodeAt(unpadded - 1) === EQUALS) unpadded--;
  if (unpadded > 1 && text.charCodeAt(unpadded - 1) === EQUALS) unpadded--;
  const room = (unpadded * 3) >>> 2;
  let sized = length;
  if (sized >= 2 && text.charCodeAt(sized - 1) === EQUALS) sized -= text.charCodeAt(sized - 2) === EQUALS ? 2 : 1;
  const expected = length < 2 || sized < 2 ? 0 : Math.floor(sized / 4) * 3 + Math.floor(((sized % 4) + 1) / 2);

  const out = new Uint8Array(room);
  let i = 0;
  let k = 0;
  /** One group of four characters, skipping characters outside the alphabets; false: stop decoding. */
  const group = (): boolean => {
    let hi = 0;
    for (let n = 0; n < 4; n++) {
      let lo: number;
      for (;;) {
        const code = text.charCodeAt(i) & 0xff;
        lo = sextet(code);
        i++;
        if (lo < 64) break;
        if (code === EQUALS || i >= length) return false;
      }
      if (n === 1) out[k++] = ((hi & 0x3f) << 2) | ((lo & 0x30) >> 4);
      else if (n === 2) out[k++] = ((hi & 0x0f) << 4) | ((lo & 0x3c) >> 2);
      else if (n === 3) out[k++] = ((hi & 0x03) << 6) | (lo & 0x3f);
      if (i >= length || k >= room) return false;
      hi = lo;
    }
    return true;
  };
  const lastK = Math.floor(Math.min(room, expected) / 3) * 3;
  let lastI = Math.floor(length / 4) * 4;
  while (i < lastI && k < lastK) {
    const a = sextet(text.charCodeAt(i));
    const b = sextet(text.charCodeAt(i + 1));
    const c = sextet(text.charCodeAt(i + 2));
    const d = sextet(text.charCodeAt(i + 3));
    if ((a | b | c | d) & 0x80) {
      if (!group()) return out.slice(0, k);
      lastI = i + Math.floor((length - i) / 4) * 4;
    } else {
      out[k++] = (a << 2) | (b >> 4);
      out[k++] = ((b & 15) << 4) | (c >> 2);
      out[k++] = ((c & 3) << 6) | d;
      i += 4;
    }
  }
  if (i < length && k < room) group();
  return out.slice(0, k);
};
