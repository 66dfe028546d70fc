import { createHash } from 'node:crypto';
import { canonicalRequestText, type ReceiptCreateRequest } from '../domain/receipt-request';

/** Hex SHA-256 of the text's UTF-8 bytes. */
export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** How an API key is stored and looked up: never in clear. */
export const hashApiKey = (apiKey: string): string => sha256Hex(apiKey);

/** A receipt request's idempotency hash: the same request sent twice hashes the same, whatever its key order. */
export const requestHash = (request: ReceiptCreateRequest): string => sha256Hex(canonicalRequestText(request));
