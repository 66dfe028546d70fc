// Verifies a webhook of this service on the receiving side. Stand-alone on purpose: plain
// JavaScript (an ES module for Node 20+), no dependency but node:crypto, so a receiver can import it
// from a clone of this repository or copy the file. Types: webhook-verify.d.mts next to it.
//
// Every delivery carries `<prefix>Signature-Timestamped: t=<unix ms>,v1=<hex>`, where v1 is
// HMAC-SHA256, keyed with the API key that created the receipt (or, for a receipt no key created,
// the shop's webhook signing secret), of `<t>.<body bytes as sent>`. While a signing secret is being
// rotated the header carries one v1 per secret, and a match with any of them passes.
// `t` is the time the attempt was sent (the `<prefix>Timestamp` header carries the same value):
// a receiver that refuses an old `t` refuses a captured request replayed later.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DEFAULT_HEADER_PREFIX = 'X-Service-';
export const DEFAULT_TOLERANCE_MS = 300_000;

const UNIX_MS = /^\d{1,15}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const SCHEME = /^[a-z][a-z0-9]*$/;

/** The header's values under `name` (case-insensitive), from a fetch `Headers` or a plain object. */
const headerValues = (headers, name) => {
  if (headers == null) return [];
  if (typeof headers.get === 'function' && typeof headers.has === 'function') {
    // fetch Headers: case-insensitive already; repeated headers come back joined with ", "
    const value = headers.get(name);
    return value === null ? [] : [value];
  }
  const wanted = name.toLowerCase();
  const values = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined || value === null) continue;
    if (Array.isArray(value)) values.push(...value.map(String));
    else values.push(String(value));
  }
  return values;
};

/** `t=<digits>,v1=<64 hex>[,v1=…]`; other schemes (`v0=…`, a later `v2=…`) are skipped. */
const parse = (value) => {
  let timestamp;
  const signatures = [];
  for (const piece of value.split(',')) {
    const at = piece.indexOf('=');
    if (at < 0) return undefined;
    const key = piece.slice(0, at).trim();
    const text = piece.slice(at + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !UNIX_MS.test(text)) return undefined;
      timestamp = Number(text);
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(text)) return undefined;
      signatures.push(Buffer.from(text, 'hex'));
    } else if (!SCHEME.test(key)) {
      return undefined;
    }
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
};

const bytesOf = (body) => {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('verifyWebhook: body must be the raw request body (a string, Buffer, Uint8Array or ArrayBuffer)');
};

/**
 * Checks `<prefix>Signature-Timestamped` against the raw body, then that `t` lies within
 * `toleranceMs` of `now` (either side; exactly `toleranceMs` away is accepted), then parses the body.
 *
 * @param {object} input
 * @param {string | Uint8Array | ArrayBuffer} input.body the request body exactly as received, before any JSON parsing
 * @param {Record<string, string | string[] | undefined> | Headers} input.headers the request headers (any case)
 * @param {string} input.secret the API key that created the receipt, or the shop's webhook signing secret
 * @param {number} [input.toleranceMs] how far `t` may be from `now`, in ms (default 300000: 5 minutes)
 * @param {number} [input.now] the current time in unix ms (default Date.now())
 * @param {string} [input.prefix] the service's header prefix (default "X-Service-")
 * @returns {{ ok: true, event: unknown, timestamp: number, deliveryId: string | null }
 *   | { ok: false, reason: 'missing_header' | 'bad_format' | 'bad_signature' | 'too_old' | 'in_future' | 'bad_body' }}
 */
export function verifyWebhook({ body, headers, secret, toleranceMs = DEFAULT_TOLERANCE_MS, now = Date.now(), prefix = DEFAULT_HEADER_PREFIX }) {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhook: secret must be the API key or webhook signing secret (a non-empty string)');
  if (typeof toleranceMs !== 'number' || !(toleranceMs >= 0)) throw new TypeError('verifyWebhook: toleranceMs must be a number ≥ 0');
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new TypeError('verifyWebhook: now must be a time in unix ms');
  const bytes = bytesOf(body);

  const values = headerValues(headers, `${prefix}Signature-Timestamped`);
  if (values.length === 0) return { ok: false, reason: 'missing_header' };
  const parsed = values.length === 1 ? parse(values[0]) : undefined;
  if (!parsed) return { ok: false, reason: 'bad_format' };

  const expected = createHmac('sha256', secret).update(`${parsed.timestamp}.`, 'utf8').update(bytes).digest();
  let matched = false;
  // Every v1 is compared, in constant time, so the answer's timing says nothing about which one or where it differs.
  for (const signature of parsed.signatures) matched = timingSafeEqual(signature, expected) || matched;
  if (!matched) return { ok: false, reason: 'bad_signature' };

  if (now - parsed.timestamp > toleranceMs) return { ok: false, reason: 'too_old' };
  if (parsed.timestamp - now > toleranceMs) return { ok: false, reason: 'in_future' };

  let event;
  try {
    event = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, reason: 'bad_body' };
  }
  const [deliveryId] = headerValues(headers, `${prefix}Delivery`);
  return { ok: true, event, timestamp: parsed.timestamp, deliveryId: deliveryId ?? null };
}
