import { DomainError } from './errors';

/** A keyset cursor: the sort key of the last item served, opaque to clients. */
export const encodeCursor = (createdAt: number, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

export const decodeCursor = (cursor: string): { createdAt: number; id: string } => {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    // fall through
  }
  throw new DomainError('invalid_input', 'cursor: is not a cursor this API gave out', { field: 'cursor' });
};
