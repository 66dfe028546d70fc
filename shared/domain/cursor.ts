import { decodeBase64Url, encodeBase64Url } from './base64url';
import { DomainError } from './errors';

const utf8 = new TextEncoder();
// A byte order mark stays a character (and makes the JSON invalid), as it always has.
const fromUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** A keyset cursor: the sort key of the last item served, opaque to clients. */
export const encodeCursor = (createdAt: number, id: string) => encodeBase64Url(utf8.encode(JSON.stringify([createdAt, id])));

export const decodeCursor = (cursor: string): { createdAt: number; id: string } => {
  try {
    const [createdAt, id] = JSON.parse(fromUtf8.decode(decodeBase64Url(cursor))) as [unknown, unknown];
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    // fall through
  }
  throw new DomainError('invalid_input', 'cursor: is not a cursor this API gave out', { field: 'cursor' });
};
