import { z } from 'zod';

/**
 * The ids a request may name (receipts, items, keys, events, on-ramp sessions) and every id the
 * service gives out: 1–64 of A–Z a–z 0–9 _ -. Each such id is also one the store can hold
 * (`isStorableId`), so an id that passes here never reaches the store as an error.
 */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const ID_RULE = 'must be 1–64 of A–Z a–z 0–9 _ -';
export const Id = z.string().regex(ID_PATTERN, ID_RULE);
export const isId = (value: unknown): value is string => typeof value === 'string' && ID_PATTERN.test(value);

/**
 * The longest id or partition key value the store takes. Cosmos allows 1,023 bytes; 255 UTF-16 units
 * are at most 765 bytes of UTF-8, whatever the characters.
 */
export const MAX_STORED_ID_LENGTH = 255;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * Why the document store cannot hold `id` as a document id or partition key value, or null when it
 * can: the one predicate both store adapters apply. Cosmos puts the id in the request path (the SDK
 * escapes it with `encodeURI`), which gives each rule its reason:
 * - `/ \ # ?` are refused by Cosmos (the SDK throws before sending; `?` would start a query string);
 * - `%` is sent as it is and read back as an escape: Cosmos stores the id but cannot point-read it;
 * - a lone surrogate makes `encodeURI` throw ("URI malformed");
 * - a blank id is refused by the SDK's point operations ("Resource ID must be a string…"), and an
 *   empty one is replaced by a random GUID on create;
 * - `.` and `..` are dot segments: the path names another resource (measured on the local server: a
 *   delete of id `..` deleted the container);
 * - leading or trailing whitespace (Cosmos refuses a resource id ending in a space) and control
 *   characters are refused so no id depends on how a proxy or a log treats them.
 */
export const unstorableIdReason = (id: unknown): string | null => {
  if (typeof id !== 'string') return 'is not a string';
  if (id.trim() === '') return 'is empty or blank';
  if (id.length > MAX_STORED_ID_LENGTH) return `is longer than ${MAX_STORED_ID_LENGTH} characters`;
  if (/[/\\#?%]/.test(id)) return 'contains one of / \\ # ? %';
  if (LONE_SURROGATE.test(id)) return 'is not well-formed UTF-16 (a lone surrogate)';
  if (CONTROL.test(id)) return 'contains a control character';
  if (id !== id.trim()) return 'starts or ends with whitespace';
  if (id === '.' || id === '..') return 'is a dot segment';
  return null;
};

export const isStorableId = (id: unknown): id is string => unstorableIdReason(id) === null;
