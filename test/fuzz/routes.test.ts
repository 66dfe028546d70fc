/**
 * Property-based fuzzing of every route in the route table: requests of the wrong shape, size and
 * encoding (bodies, query strings, path parameters) under every kind of credential, through the
 * Functions path and, for a share of runs, through the local host over HTTP. Every answer must be
 * below 500 (a chain route may answer 503 service_unavailable: memory deps have no chain), carry a
 * correlation id, be JSON, name a known error code and a message when refused, and a refusal must
 * leave the store as it was. Every path parameter and id-like field is also tried with ids the store
 * cannot hold; the memory stores refuse those as Cosmos does, and no such id may reach a store at all.
 *
 * Bounded for `npm test` (40 runs per route, a fixed seed); `FUZZ_RUNS=<runs per route>` and
 * `FUZZ_SEED=<seed>` run it longer or replay a failure (fast-check prints the seed and the path of
 * the counterexample); `FUZZ_STATS=1` prints how often each route answered each status.
 */
import { request as httpRequest } from 'node:http';
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppDeps } from '../../shared/app/deps';
import { revokeApiKey } from '../../shared/app/api-keys';
import type { WebhookMessage } from '../../shared/app/receipt-status';
import { deliverWebhook } from '../../shared/app/webhooks';
import { updateMerchant } from '../../shared/app/merchants';
import { memoryDeps, setDeps } from '../../shared/composition';
import { errorCodes } from '../../shared/domain/errors';
import { unstorableIdReason } from '../../shared/domain/ids';
import { failureCodes } from '../../shared/domain/failures';
import { receiptStatuses } from '../../shared/domain/receipt';
import { scopes } from '../../shared/domain/subscription';
import type { MemoryEventQueue } from '../../shared/adapters/memory/deliveries';
import { sandboxOnramp } from '../../shared/adapters/onramp/sandbox';
import { httpFunctions } from '../../shared/http/function';
import { MAX_BODY_BYTES } from '../../shared/http/headers';
import { allRoutes, matchRoute, routes, type RouteSpec } from '../../shared/http/routes';
import type { WebhookSender } from '../../shared/ports/webhooks';
import { queues } from '../../shared/registry';
import { addMerchant, invoke, startHost, type Merchant, type RunningHost } from '../support/http';
import { signInAs, type SignedInBrowser } from '../support/session';
import { testWallets } from '../support/siwe';
import { storeSnapshot } from '../support/snapshot';

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_501);
/** One run in this many goes through the local host over HTTP; the rest call the handler. */
const HOST_SHARE = 4;

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
};

const jsonSchemaOf = (schema: z.ZodType): JsonSchema => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

// ---------------------------------------------------------------------------------------------
// Values: a JSON number literal JSON.stringify cannot write (1e309, -0, 30 digits) is kept as text.

class RawNumber {
  constructor(readonly text: string) {}
}

const toJsonText = (value: unknown): string => {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .map((key) => `${JSON.stringify(key)}:${toJsonText((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

/** A string of about `bytes` UTF-8 bytes made of `unit`. */
const sized = (bytes: number, unit: string) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit))));

const edgeNumbers = fc.constantFrom(-1, -0.5, 0, 0.1 + 0.2, 1.005, 0.001, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, Number.MAX_VALUE, Number.MIN_VALUE, -1e308, 123_456_789.123);
const rawNumbers = fc
  .constantFrom('1e309', '-1e309', '1e-400', '-0', '0.0000000000000000000001', '1E2', '99999999999999999999999999999', '1.0', '12345678901234567890.5', '-0.0')
  .map((text) => new RawNumber(text));
const oddStrings = fc.constantFrom(
  '', ' ', '\u0000', '\uD800', '\uDC00x', '\uFEFF', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀', 'ü', 'a\u202Eb', 'null', 'true', '0', '-1', '1e309', 'NaN', 'Infinity',
  '__proto__', 'constructor', '<script>alert(1)</script>', "' OR 1=1 --", '../../etc/passwd', '%00', '%2F', '\r\n', '\t', '  padded  ',
  'https://example.com/x', 'http://127.0.0.1:9/x', 'http://169.254.169.254/latest', 'javascript:alert(1)', 'http://[::ffff:127.0.0.1]/',
  '0x' + 'f'.repeat(40), '0x' + 'F'.repeat(130), 'status', 'R-TEST-EVENT', '$receipt', '$item', '$event', '$key', '$sku', '$slug',
);
const hugeStrings = fc
  .tuple(fc.constantFrom(5_000, 70_000, MAX_BODY_BYTES - 200, MAX_BODY_BYTES - 16, MAX_BODY_BYTES + 16), fc.constantFrom('a', 'é', '😀', '\u0000', ' '))
  .map(([bytes, unit]) => sized(bytes, unit));
/**
 * Ids the document store cannot hold (`unstorableIdReason`: blank, lone surrogates, `/ \\ # ? %`, dot
 * segments, control characters, too long) and the percent-encoded forms a URL parser decodes into
 * them: what every path parameter and every id-like query and body field is tried with.
 */
const hostileIds = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '', ' ', '   ', '\t', '\u00A0', '\u3000', ' a', 'a ', 'a\n', '\uD800\uD800', '\uDC00', 'a\uD800', 'a/b', 'a\\b', 'a#b', 'a?b', '/', '\\', '#', '?',
      'a%2Fb', '%2F', '%2e%2e', '%', 'a%41', '.', '..', '\u0000', 'a\u0001b', '\u007F', 'a\u0085', 'x'.repeat(256), 'x'.repeat(8_000), '😀'.repeat(4_000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }) },
);

/** A body or query field that names a document (an id, a key, a slug, a session) or carries one (a cursor). */
const ID_FIELD = /^(id|slug|shop|session|cursor)$|(Id|Slug)$/;

const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 4, arbitrary: oddStrings },
  { weight: 1, arbitrary: hugeStrings },
);

/** A value of any JSON type, the odd ones over-represented. */
const garbage: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: edgeNumbers },
  { weight: 2, arbitrary: rawNumbers },
  { weight: 3, arbitrary: anyString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { ['__proto__']: { polluted: true } }, { constructor: { prototype: { polluted: true } } }) },
);

const stringMatching = (pattern: string): fc.Arbitrary<string> => {
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return fc.string();
  }
};

/**
 * Values shaped by a JSON schema: the right field names, each node replaced by a value of the wrong
 * type, size or range with probability `noise` (0: values the schema itself accepts, as far as a
 * JSON schema can say; cross-field rules such as totals are left to chance).
 */
const fromSchema = (schema: JsonSchema, noise: number, depth = 0): fc.Arbitrary<unknown> => {
  if (depth > 5) return garbage;
  const wrong = Math.round(noise * 100);
  return wrong === 0 ? shaped(schema, noise, depth) : fc.oneof({ weight: 100 - wrong, arbitrary: shaped(schema, noise, depth) }, { weight: wrong, arbitrary: garbage });
};

/** Seeded ids and values (resolved per world when the request is sent) and the service's own words. */
const placeholders = fc.oneof(
  fc.constantFrom('$receipt', '$item', '$event', '$key', '$sku', '$slug'),
  fc.constantFrom(...receiptStatuses, ...scopes, 'all', 'http://127.0.0.1:9/hook', 'https://example.com/hook', 'US-CA', 'DE-DE'),
  fc.constantFrom(...failureCodes),
);

const shaped = (schema: JsonSchema, noise: number, depth: number): fc.Arbitrary<unknown> => {
  const strict = noise === 0;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && !schema.type) return fc.oneof(...branches.map((branch) => fromSchema(branch, noise, depth + 1)));
  if (schema.enum) {
    const values = schema.enum as unknown[];
    if (strict) return fc.constantFrom(...values);
    return fc.oneof(fc.constantFrom(...values), fc.constantFrom(...values).map((value) => (typeof value === 'string' ? ` ${value.toUpperCase()} ` : value)));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (schema.type) {
    case 'object': {
      const model = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([key, property]) => {
          const value = fromSchema(property, noise, depth + 1);
          return [key, !strict && ID_FIELD.test(key) ? fc.oneof({ weight: 2, arbitrary: value }, { weight: 1, arbitrary: hostileIds }) : value];
        }),
      );
      const required = ((schema as { required?: string[] }).required ?? []).filter((key) => key in model);
      // Near-valid objects leave most optional fields out, so that one wrong value is the only fault.
      const absent = Symbol('absent');
      const known = strict
        ? fc
            .record(Object.fromEntries(Object.entries(model).map(([key, value]) => [key, required.includes(key) ? value : fc.oneof({ weight: 3, arbitrary: fc.constant(absent) }, { weight: 1, arbitrary: value })])))
            .map((fields) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== absent)))
        : fc.record(model, { requiredKeys: [] });
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && !schema.properties) {
        // A free-form record (metadata): odd keys, values of any type.
        return fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', '')), strict ? fc.jsonValue({ maxDepth: 2 }) : garbage, { maxKeys: 4 });
      }
      if (strict) return known;
      const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'id', 'wallet')), garbage, { maxKeys: 3 });
      return fc.tuple(known, extra, fc.boolean()).map(([fields, more, withMore]) => {
        const out: Record<string, unknown> = {};
        if (withMore) for (const key of Object.keys(more)) Object.defineProperty(out, key, { value: more[key], enumerable: true, writable: true, configurable: true });
        for (const key of Object.keys(fields)) out[key] = fields[key];
        return out;
      });
    }
    case 'array': {
      const item = schema.items ? fromSchema(schema.items, noise, depth + 1) : garbage;
      const min = schema.minItems ?? 0;
      const max = schema.maxItems ?? 100;
      if (strict) return fc.array(item, { minLength: min, maxLength: Math.max(min, Math.min(max, 3)) });
      return fc.oneof(
        { weight: 4, arbitrary: fc.array(item, { maxLength: 4 }) },
        // Many copies of one element, past the limit; no more than about twice the body limit in all.
        {
          weight: 1,
          arbitrary: fc
            .tuple(item, fc.constantFrom(max, max + 1, 5_000))
            .map(([one, count]) => Array.from({ length: Math.min(count, Math.ceil((2 * MAX_BODY_BYTES) / (toJsonText(one).length + 1))) }, () => one)),
        },
      );
    }
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? 200;
      const valid = [
        ...(schema.pattern ? [{ weight: 4, arbitrary: stringMatching(schema.pattern) }] : []),
        ...(schema.format === 'uri' ? [{ weight: 2, arbitrary: fc.webUrl() }] : []),
        { weight: schema.pattern ? 1 : 3, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, Math.min(max, 40)) }) },
        { weight: 2, arbitrary: placeholders },
      ];
      if (strict) return fc.oneof(...valid);
      return fc.oneof(
        ...valid,
        { weight: 1, arbitrary: fc.constantFrom(max, max + 1).chain((length) => fc.constantFrom('x', 'é', '😀').map((unit) => unit.repeat(length))) },
        { weight: 2, arbitrary: anyString },
      );
    }
    case 'number':
    case 'integer': {
      const min = schema.minimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      const low = Math.max(Math.ceil(min), -(2 ** 31));
      const high = Math.min(Math.floor(max), 2 ** 31);
      const valid = [
        { weight: 2, arbitrary: fc.integer({ min: low, max: Math.min(high, low + 100) }) },
        { weight: 1, arbitrary: fc.integer({ min: low, max: high }) },
        { weight: 1, arbitrary: fc.constantFrom(min, max) },
        ...(schema.type === 'number' ? [{ weight: 2, arbitrary: fc.integer({ min: Math.round(min * 100), max: Math.round(Math.min(max, 10_000) * 100) }).map((cents) => cents / 100) }] : []),
      ];
      if (strict) return fc.oneof(...valid);
      return fc.oneof(
        ...valid,
        { weight: 1, arbitrary: fc.double({ min, max, noNaN: true }) },
        { weight: 2, arbitrary: fc.constantFrom(min - 1, max + 1, min - 0.5, max + 0.01, min + 0.001, (min + max) / 3) },
        { weight: 1, arbitrary: edgeNumbers },
        { weight: 1, arbitrary: rawNumbers },
      );
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return strict ? fc.jsonValue({ maxDepth: 2 }) : garbage;
  }
};

// ---------------------------------------------------------------------------------------------
// Requests.

type Credential = 'none' | 'key' | 'keyNoScopes' | 'keyRevoked' | 'session' | 'sessionNoCsrf' | 'forged';
type Body = { text: string } | { bytes: Uint8Array } | undefined;

interface FuzzRequest {
  via: 'functions' | 'host';
  credential: Credential;
  keyHeader: 'x-api-key' | 'ocp-apim-subscription-key';
  correlationId: string | undefined;
  contentType: string | undefined;
  params: Record<string, string>;
  /** How path parameters go into the request target on the local host path (the Functions path always encodes). */
  rawPath: boolean;
  /** A rewriting of the request target the local host must route (or refuse) like any other. */
  pathTrick: (typeof pathTricks)[number];
  query: string;
  body: Body;
}

const pathTricks = ['none', 'double-slash', 'double-slash-colon', 'double-slash-bracket', 'double-slash-port', 'trailing-slash', 'backslash', 'dot-segment', 'dot-dot', 'upper-case', 'absolute-form', 'encoded-slash'] as const;

/** The request target as a client might write it: `//api/…`, `\\`, `/./`, absolute-form and the like. */
const withTrick = (path: string, trick: (typeof pathTricks)[number]) => {
  switch (trick) {
    case 'double-slash':
      return `/${path}`;
    // An empty first segment makes the rest look like an authority to a URL parser given the target as a relative URL.
    case 'double-slash-colon':
      return `//:${path}`;
    case 'double-slash-bracket':
      return `//[${path}`;
    case 'double-slash-port':
      return `//x:99999${path}`;
    case 'trailing-slash':
      return `${path}/`;
    case 'backslash':
      return path.replaceAll('/', '\\');
    case 'dot-segment':
      return `/.${path}`;
    case 'dot-dot':
      return `/x/..${path}`;
    case 'upper-case':
      return path.toUpperCase();
    case 'absolute-form':
      return `http://localhost${path}`;
    case 'encoded-slash':
      return path.replace(/(?<=.)\//, '%2F');
    default:
      return path;
  }
};

const nested = (depth: number, open: string, close: string, leaf = '1') => `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;

const bodyOf = (route: RouteSpec): fc.Arbitrary<Body> => {
  const schema = route.documentedBody ?? route.body;
  const json = schema ? jsonSchemaOf(schema) : undefined;
  const fields = Object.keys(json?.properties ?? {});
  const field = fields.length > 0 ? fc.constantFrom(...fields) : fc.constant('data');
  const shapedText = (json ? fromSchema(json, 0.25) : garbage).map(toJsonText);
  const nearlyValid = json ? fc.constantFrom(0, 0.04, 0.1).chain((noise) => fromSchema(json, noise)).map(toJsonText) : shapedText;
  const text = (arbitrary: fc.Arbitrary<string>) => arbitrary.map((value): Body => ({ text: value }));
  const invalidJson = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('{', '}', '{"a":}', "{'a':1}", '{"a":1,}', '[1,2', 'undefined', 'NaN', '{"a":NaN}', '{"a":Infinity}', '\uFEFF{}', '/* c */{}', '{"a":"\\x00"}', '{"a":1}{"b":2}', '"unterminated'),
    fc.tuple(shapedText, fc.nat()).map(([value, cut]) => value.slice(0, cut % Math.max(1, value.length))),
  );
  const deep = fc.tuple(fc.constantFrom(31, 32, 33, 100, 10_000, 100_000), field, fc.nat(3)).map(([depth, name, kind]) =>
    kind === 0 ? nested(depth, '[', ']') : kind === 1 ? nested(depth, '{"a":', '}') : kind === 2 ? '['.repeat(depth) : `{${JSON.stringify(name)}:${nested(depth, '[', ']')}}`,
  );
  const huge = fc.tuple(fc.constantFrom(MAX_BODY_BYTES - 64, MAX_BODY_BYTES - 2, MAX_BODY_BYTES, MAX_BODY_BYTES + 1, MAX_BODY_BYTES * 2), field, fc.boolean()).map(([bytes, name, inField]) =>
    inField ? `{${JSON.stringify(name)}:"${sized(bytes - name.length - 8, 'a')}"}` : `"${sized(bytes - 2, 'x')}"`,
  );
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    shapedText.map((value) => new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(value)])),
    shapedText.map((value) => new Uint8Array(Buffer.from(`\uFEFF${value}`, 'utf16le'))),
    field.map((name) => new Uint8Array(Buffer.concat([Buffer.from(`{${JSON.stringify(name)}:"`), Buffer.from([0xff, 0xfe, 0xc0, 0xae, 0xed, 0xa0, 0x80]), Buffer.from('"}')]))),
  ).map((value): Body => ({ bytes: value }));
  return fc.oneof(
    { weight: 4, arbitrary: text(shapedText) },
    { weight: 4, arbitrary: text(nearlyValid) },
    { weight: 2, arbitrary: text(fc.jsonValue().map((value) => JSON.stringify(value))) },
    { weight: 2, arbitrary: text(invalidJson) },
    { weight: 1, arbitrary: fc.constantFrom<Body>(undefined, { text: '' }, { text: ' \n\t' }, { text: 'null' }) },
    { weight: 1, arbitrary: text(deep) },
    { weight: 1, arbitrary: text(huge) },
    { weight: 1, arbitrary: bytes },
  );
};

const queryValues = fc.oneof(
  fc.constantFrom('', ' ', '-1', '0', '1', '1.5', '1e3', '1e309', '0x10', '-0', 'NaN', 'Infinity', ' 5 ', '٣', '１', '9'.repeat(400), 'true', 'null', '[]', '{}', 'a,b,,c', ',', '$item', '$receipt'),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom(2_000, 20_000).map((length) => 'q'.repeat(length)),
);

const stringOf = (schema: JsonSchema | undefined): fc.Arbitrary<string> => {
  if (!schema) return queryValues;
  return fc.constantFrom(0, 0.25).chain((noise) => shaped(schema, noise, 3)).map((value) => (typeof value === 'string' ? value : value instanceof RawNumber ? value.text : toJsonText(value)));
};

/** Lone surrogates as U+FFFD, as a URL parser writes them (encodeURIComponent throws on them). */
const wellFormed = (text: string) => text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** How a query pair is written: encoded, raw (what a careless client sends), spaces as `+`, encoded twice, or a key alone. */
const encodings = ['standard', 'raw', 'plus', 'double', 'bare'] as const;
const encode = (text: string, how: (typeof encodings)[number]) => {
  const safe = wellFormed(text);
  if (how === 'raw') return safe;
  if (how === 'plus') return encodeURIComponent(safe).replaceAll('%20', '+');
  if (how === 'double') return encodeURIComponent(encodeURIComponent(safe));
  return encodeURIComponent(safe);
};

const queryOf = (route: RouteSpec): fc.Arbitrary<string> => {
  const properties = route.query ? (jsonSchemaOf(route.query).properties ?? {}) : {};
  const keys = Object.keys(properties);
  const declared =
    keys.length > 0
      ? fc.constantFrom(...keys).chain((key) => fc.tuple(fc.constant(key), fc.oneof(stringOf(properties[key]), queryValues, ...(ID_FIELD.test(key) ? [hostileIds] : []))))
      : undefined;
  const unknown = fc.tuple(fc.oneof(fc.constantFrom('wallet', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'ID', 'Limit', 'limit[]', 'a.b'), fc.string({ maxLength: 8 })), queryValues);
  const pair = declared ? fc.oneof({ weight: 4, arbitrary: declared }, { weight: 1, arbitrary: unknown }) : unknown;
  const tricks = fc.subarray(['%', '%zz', '%00', '%FF', '%C0%AE', '&', '&&', '=', '==', ';', '%26', '%3D', '+', '%2B', '#frag', '?'], { maxLength: 3 });
  return fc
    .tuple(fc.array(fc.tuple(pair, fc.constantFrom(...encodings)), { maxLength: 6 }), fc.boolean(), tricks)
    .map(([pairs, repeat, extra]) => {
      const parts = pairs.map(([[key, value], how]) => (how === 'bare' ? encode(key, 'standard') : `${encode(key, how === 'double' ? 'standard' : how)}=${encode(value, how)}`));
      if (repeat) parts.push(...parts);
      parts.push(...extra);
      return parts.length > 0 ? `?${parts.join('&')}` : '';
    });
};

const paramValues = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '..', '.', '%2F', '/', '%00', '\u0000', '#', '?', ' ', 'a b', '%', '%25', '\\', 'ü', '😀', '\uD800', 'status', 'terminal', 'STATUS', '',
      'a'.repeat(2_000), 'A'.repeat(64), 'A'.repeat(65), 'R-TEST-EVENT', 'null', 'undefined', '__proto__', 'constructor', 'toString', '$receipt', '$event', '$key',
    ),
  },
  { weight: 3, arbitrary: hostileIds },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/) },
);

const credentialsFor = (route: RouteSpec): fc.Arbitrary<Credential> => {
  const likely: Credential[] = route.auth.kind === 'key' ? ['key'] : route.auth.kind === 'session' ? ['session'] : ['none'];
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...likely) },
    { weight: 3, arbitrary: fc.constantFrom<Credential>('none', 'key', 'keyNoScopes', 'keyRevoked', 'session', 'sessionNoCsrf', 'forged') },
  );
};

const requestOf = (route: RouteSpec): fc.Arbitrary<FuzzRequest> => {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  return fc.record({
    via: fc.nat(HOST_SHARE - 1).map((n) => (n === 0 ? 'host' : 'functions') as FuzzRequest['via']),
    credential: credentialsFor(route),
    keyHeader: fc.constantFrom('x-api-key', 'ocp-apim-subscription-key'),
    correlationId: fc.option(fc.constantFrom('fuzz-1', 'x'.repeat(129), 'with space', 'é', '', 'a:b.c_d-e'), { nil: undefined }),
    contentType: fc.option(fc.constantFrom('application/json', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''), { nil: undefined }),
    params: fc.tuple(...names.map(() => paramValues)).map((values) => Object.fromEntries(names.map((name, index) => [name, values[index]!]))),
    rawPath: fc.boolean(),
    pathTrick: fc.oneof({ weight: 3, arbitrary: fc.constant('none' as const) }, { weight: 2, arbitrary: fc.constantFrom(...pathTricks) }),
    query: queryOf(route),
    body: route.method === 'GET' ? fc.constant(undefined) : bodyOf(route),
  });
};

// ---------------------------------------------------------------------------------------------
// A world per route: memory deps with seeded data, keys and a signed-in session.

interface World {
  deps: AppDeps;
  host: RunningHost;
  keys: Record<'all' | 'none' | 'revoked' | 'spare', Merchant>;
  session: SignedInBrowser;
  ids: Record<string, string>;
  /** Keys the store cannot hold that a request still put to it (the stores answer them, but the id rule should have first). */
  strayKeys: string[];
}

/** The keyed operations of the store ports: their string arguments and their documents' ids are keys. */
const KEYED = new Set(['get', 'create', 'replace', 'upsert', 'delete', 'update', 'touch']);

/**
 * The stores of `deps`, each watched for keys it cannot hold (`unstorableIdReason`): the stores answer
 * them as not found or invalid input, so only this tells that a route let such an id past its checks.
 */
const watchingKeys = (deps: AppDeps, stray: string[]): AppDeps => {
  const watch = <T extends object>(store: T): T =>
    new Proxy(store, {
      get(target, name) {
        const member = Reflect.get(target, name, target) as unknown;
        if (typeof member !== 'function' || !KEYED.has(String(name))) return member;
        return (...args: unknown[]) => {
          const keys = args.map((arg) => (arg && typeof arg === 'object' ? (arg as { id?: unknown }).id : arg)).filter((key) => typeof key === 'string');
          for (const key of keys) {
            const reason = unstorableIdReason(key);
            if (reason) stray.push(`${String(name)}(${JSON.stringify(key.slice(0, 40))}${key.length > 40 ? '…' : ''}): ${reason}`);
          }
          return (member as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    ...deps,
    claims: watch(deps.claims),
    sessions: watch(deps.sessions),
    merchants: watch(deps.merchants),
    receipts: watch(deps.receipts),
    deliveries: watch(deps.deliveries),
    platform: watch(deps.platform),
    chainState: watch(deps.chainState),
    inventory: watch(deps.inventory),
    subscriptions: watch(deps.subscriptions),
  };
};

/** No network: a webhook attempt fails at once. */
const offlineSender: WebhookSender = { send: async () => ({ httpStatus: null, error: 'offline (fuzz)', durationMs: 0 }) };

const makeWorld = async (): Promise<World> => {
  const base = memoryDeps();
  const wallet = testWallets.merchant.address;
  // The sandbox on-ramp, as `npm start` has it, so its page and form reach the store; it sends nothing.
  const sandbox = sandboxOnramp({ baseUrl: base.settings.baseUrl, secret: 'fuzz-sandbox-secret', send: async () => {} });
  const strayKeys: string[] = [];
  const deps = watchingKeys(
    memoryDeps({
      webhookSender: offlineSender,
      onramp: sandbox.provider,
      onrampSandbox: sandbox.desk,
      settings: { ...base.settings, adminWallets: [wallet, wallet.toLowerCase()], keylessRateLimitPerMinute: 1_000_000 },
    }),
    strayKeys,
  );
  setDeps(deps);
  const session = await signInAs(testWallets.merchant);
  const owner = session.answer.json.wallet as string;
  const keys = {
    all: await addMerchant(deps, owner),
    none: await addMerchant(deps, owner, { scopes: [] }),
    revoked: await addMerchant(deps, owner),
    spare: await addMerchant(deps, owner),
  };
  await revokeApiKey(deps, keys.revoked.subscriptionId);
  await updateMerchant(deps, owner, (current, now) => ({
    merchant: { ...current, split: { address: '0x' + '5'.repeat(40), recipients: [], platformFeeBps: 100, partnerFeeBps: 0, txHash: '0x' + '6'.repeat(64), chainId: 31337, deployedAt: now } },
    result: undefined,
  }));
  const headers = { 'x-subscription-id': keys.all.subscriptionId };
  const item = await invoke('inventory-upsert', { method: 'POST', path: '/api/inventory', headers, body: { sku: 'SEED-1', name: 'Seed item', priceUsd: 5, stockQty: 3 } });
  const receipt = await invoke('receipts-create', {
    method: 'POST',
    path: '/api/receipts',
    headers,
    body: { id: 'seed-receipt', lineItems: [{ label: 'Seed', priceUsd: 5, qty: 1 }], totalUsd: 5, webhook_url: 'http://127.0.0.1:9/hook' },
  });
  await invoke('receipts-status-post', { method: 'POST', path: '/api/receipts/status', headers, body: { id: 'seed-receipt', status: 'link_opened' } });
  const [message] = (deps.queue as MemoryEventQueue).take(queues.webhooks).map((entry) => entry.message as WebhookMessage);
  await deliverWebhook(deps, message!);
  const shop = await invoke('shop-config-update', { method: 'POST', path: '/api/shop/config', headers: session.headers({ 'content-type': 'application/json' }), body: { directory: { slug: 'seed-shop', listed: true } } });
  expect([item.status, receipt.status, shop.status]).toEqual([200, 201, 200]);
  const host = await startHost(deps);
  expect(strayKeys).toEqual([]);
  return {
    deps,
    host,
    keys,
    session,
    strayKeys,
    ids: { $receipt: 'seed-receipt', $item: (item.json.item as { id: string }).id, $event: message!.eventId, $key: keys.spare.subscriptionId, $sku: 'SEED-1', $slug: 'seed-shop' },
  };
};

const resolve = (text: string, world: World) => text.replace(/\$(receipt|item|event|key|sku|slug)/g, (token) => world.ids[token] ?? token);

const headersFor = (request: FuzzRequest, world: World): Record<string, string> => {
  const headers: Record<string, string> = {};
  const key = { key: world.keys.all, keyNoScopes: world.keys.none, keyRevoked: world.keys.revoked }[request.credential as 'key'];
  if (key) {
    // The Functions path sees what the gateway stamps; the local host checks the key itself.
    if (request.via === 'functions') headers['x-subscription-id'] = key.subscriptionId;
    else headers[request.keyHeader] = key.apiKey;
  }
  if (request.credential === 'session') Object.assign(headers, world.session.headers());
  if (request.credential === 'sessionNoCsrf') {
    const { cookie, origin } = world.session.headers();
    Object.assign(headers, { cookie: cookie!.replace(/; cb_csrf_token=.*/, ''), origin: origin! });
  }
  if (request.credential === 'forged') {
    Object.assign(headers, {
      cookie: 'cb_auth_token=eyJhbGciOiJub25lIn0.e30.; cb_csrf_token=%E0%A4%A',
      'x-csrf-token': 'forged',
      'x-subscription-id': 'sub_forged',
      [request.keyHeader]: 'sk_forged',
      'x-wallet': world.keys.all.wallet,
      'x-edge-secret': 'forged',
    });
  }
  if (request.correlationId !== undefined) headers['x-correlation-id'] = request.correlationId;
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  return headers;
};

const bodyBytes = (body: Body, world: World): Uint8Array | string | undefined =>
  body === undefined ? undefined : 'text' in body ? resolve(body.text, world) : body.bytes;

interface Raw {
  status: number;
  headers: Record<string, string>;
  text: string;
  log: string[];
  /** A raw or rewritten request target, or an empty or dot-segment parameter, may reach another route than the one fuzzed (`/console/assets/.` is `/console/{page}`). */
  anyRoute?: boolean;
}

const pathOf = (route: RouteSpec, params: Record<string, string>, raw: boolean) =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => (raw ? wellFormed(params[name]!) : encodeURIComponent(wellFormed(params[name]!))));

/** The Functions path: the handler as the Functions host calls it, route parameters decoded. */
const viaFunctions = async (route: RouteSpec, request: FuzzRequest, world: World): Promise<Raw> => {
  const params = Object.fromEntries(Object.entries(request.params).map(([name, value]) => [name, resolve(value, world)]));
  const body = bodyBytes(request.body, world);
  const log: string[] = [];
  const response = (await httpFunctions.get(route.name)!.options.handler(
    new HttpRequest({
      method: route.method,
      url: `http://localhost${pathOf(route, params, false)}${resolve(request.query, world)}`,
      headers: headersFor(request, world),
      params,
      ...(body !== undefined && { body: typeof body === 'string' ? { string: body } : { bytes: body } }),
    }),
    new InvocationContext({ functionName: route.name, logHandler: (_level, ...args) => log.push(args.map((arg) => (arg instanceof Error ? arg.stack : String(arg))).join(' ')) }),
  )) as HttpResponseInit;
  const headers = Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, string>).map(([name, value]) => [name.toLowerCase(), value]));
  return { status: response.status ?? 200, headers, text: typeof response.body === 'string' ? response.body : String(response.body ?? ''), log };
};

/** node:http refuses to send a target with characters outside U+0021–U+00FF: those alone are encoded. */
const sendable = (target: string) => target.replace(/[^\u0021-\u00ff]/gu, (char) => encodeURIComponent(wellFormed(char)));

/**
 * The local host over HTTP: the gateway in front of the same handler. node:http sends the request
 * target exactly as written (fetch would normalize `..`, `\\` and `//` before sending).
 */
const viaHost = async (route: RouteSpec, request: FuzzRequest, world: World): Promise<Raw> => {
  const params = Object.fromEntries(Object.entries(request.params).map(([name, value]) => [name, resolve(value, world)]));
  const body = bodyBytes(request.body, world);
  const bytes = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
  const { port } = new URL(world.host.url);
  const target = sendable(withTrick(pathOf(route, params, request.rawPath), request.pathTrick) + resolve(request.query, world));
  return new Promise<Raw>((done, fail) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: route.method,
        path: target,
        headers: { ...headersFor(request, world), ...(bytes && { 'content-length': String(bytes.length) }) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          done({
            status: response.statusCode ?? 0,
            headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)])),
            text: Buffer.concat(chunks).toString('utf8'),
            log: [`request target: ${target.slice(0, 300)}`],
            anyRoute: request.rawPath || request.pathTrick !== 'none' || matchRoute(allRoutes, route.method, new URL(pathOf(route, params, false), 'http://localhost').pathname)?.route !== route,
          }),
        );
        response.on('error', fail);
      },
    );
    outgoing.on('error', fail);
    outgoing.end(bytes);
  });
};

const known = new Set<string>(errorCodes);

/** The properties of every answer; `before` and `after` are store snapshots around the call. */
const checkAnswer = (route: RouteSpec, answer: Raw, before: string, after: string) => {
  const context = `${route.method} ${route.path} answered ${answer.status} ${answer.text.slice(0, 300)}${answer.log.length > 0 ? `\n${answer.log.join('\n')}` : ''}`;
  let json: { error?: unknown; message?: unknown } | undefined;
  const type = String(answer.headers['content-type'] ?? '');
  if ((route.responseKind === 'html' || answer.anyRoute) && type.startsWith('text/html')) {
    // A page's errors are pages, for people: the generic one shows its code in a <code> element; the
    // portal's own "not found" page says what to do instead (it is still a 404).
    const code = /<code>([a-z_]+)<\/code>/.exec(answer.text)?.[1] ?? (answer.status === 404 ? 'not_found' : undefined);
    json = answer.status >= 400 ? { error: code, message: /<p>([^<]*)<\/p>/.exec(answer.text)?.[1] } : {};
  } else if (route.responseKind === 'asset' && answer.status < 400) {
    json = {};
  } else {
    try {
      json = JSON.parse(answer.text);
    } catch {
      json = undefined;
    }
  }
  expect(json, `${context}: the body is not JSON`).toBeDefined();
  expect(answer.headers['x-correlation-id'], `${context}: no x-correlation-id`).toBeTruthy();
  const chainDown = answer.status === 503 && json?.error === 'service_unavailable' && route.errors.includes('service_unavailable');
  expect(answer.status < 500 || chainDown, `${context}: a server error`).toBe(true);
  if (answer.status >= 400) {
    expect(known.has(json?.error as string), `${context}: unknown error code`).toBe(true);
    expect(typeof json?.message, `${context}: no message`).toBe('string');
    expect(after, `${context}: a refusal changed the store`).toBe(before);
  }
};

const fuzz = async (route: RouteSpec, world: World, request: FuzzRequest) => {
  setDeps(world.deps);
  const before = storeSnapshot(world.deps);
  world.strayKeys.length = 0;
  const answer = request.via === 'host' ? await viaHost(route, request, world) : await viaFunctions(route, request, world);
  checkAnswer(route, answer, before, storeSnapshot(world.deps));
  expect(world.strayKeys, `${route.method} ${route.path} answered ${answer.status}: an id the store cannot hold got past the route's checks`).toEqual([]);
  if (process.env.FUZZ_STATS) {
    const key = `${route.name} ${answer.status} ${answer.status >= 400 && answer.text.startsWith('{') ? (JSON.parse(answer.text) as { error: string }).error : ''}`;
    stats.set(key, (stats.get(key) ?? 0) + 1);
  }
};

/** FUZZ_STATS=1: how often each route answered each status and code (to see how deep the inputs reach). */
const stats = new Map<string, number>();
afterAll(() => {
  if (process.env.FUZZ_STATS) console.log([...stats].sort().map(([key, count]) => `${key}: ${count}`).join('\n'));
});

describe.each(allRoutes.map((route) => [`${route.method} ${route.path} (${route.name})`, route] as const))('%s', (_, route) => {
  let world: World;
  beforeAll(async () => {
    world = await makeWorld();
  });
  afterAll(() => world?.host.close());

  it('answers every malformed request with a clear 4xx and changes nothing when it refuses', async () => {
    await fc.assert(
      fc.asyncProperty(requestOf(route), (request) => fuzz(route, world, request)),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe('the store snapshot the fuzzing compares', () => {
  it('changes with every kind of write a refusal could leave behind, and not with key use or rate counting', async () => {
    const world = await makeWorld();
    await world.host.close();
    const { deps } = world;
    const writes: Array<[string, () => Promise<unknown>]> = [
      ['a claim', () => deps.claims.create('x', { id: 'x', owner: 'fuzz', createdAt: 1 })],
      ['a document rewritten as it was', async () => deps.merchants.upsert(world.session.answer.json.wallet as string, (await deps.merchants.get(world.session.answer.json.wallet as string, world.session.answer.json.wallet as string))!.value)],
      ['an inventory delete', () => deps.inventory.delete(world.keys.all.wallet, world.ids.$item!)],
      ['a receipt', async () => deps.receipts.upsert(world.keys.all.wallet, { ...(await deps.receipts.get(world.keys.all.wallet, 'seed-receipt'))!.value, transactionId: 'changed' })],
      ['a queued message', () => deps.queue.send('outbox', { any: 1 })],
      ['a subscription', () => revokeApiKey(deps, world.keys.spare.subscriptionId)],
      ['a session', () => deps.sessions.delete('none', 'none').then(() => deps.sessions.create('s', { id: 's', wallet: 'w', createdAt: 1, expiresAt: 2, revokedAt: null, csrfHash: '' }))],
    ];
    for (const [what, write] of writes) {
      const before = storeSnapshot(deps);
      await write();
      expect(storeSnapshot(deps), what).not.toBe(before);
    }
    const before = storeSnapshot(deps);
    await deps.subscriptions.touch(world.keys.all.subscriptionId, Date.now());
    deps.rateLimiter.hit(world.keys.all.subscriptionId, 10, Date.now());
    // A key's usage counter (written by the batcher a second after the calls it counts).
    await deps.claims.create('usage:sub_x:2026-11-01', { id: 'usage:sub_x:2026-11-01', owner: 'sub_x', createdAt: 1, count: 3 });
    expect(storeSnapshot(deps)).toBe(before);
  });
});

/** Counterexamples the fuzzing above found, kept as plain tests. */
describe('regressions found by fuzzing the route table', () => {
  let world: World;
  beforeAll(async () => {
    world = await makeWorld();
  });
  afterAll(() => world?.host.close());

  const hostCall = (route: RouteSpec, target: Partial<FuzzRequest>) =>
    viaHost(route, { via: 'host', credential: 'none', keyHeader: 'x-api-key', correlationId: undefined, contentType: undefined, params: {}, rawPath: false, pathTrick: 'none', query: '', body: undefined, ...target }, world);

  it('local host: a request target starting with "//" and an invalid authority after it answers 4xx, not 500', async () => {
    for (const pathTrick of ['double-slash-colon', 'double-slash-bracket', 'double-slash-port'] as const) {
      const answer = await hostCall(routes.authNonce, { pathTrick });
      expect(answer.status, `${pathTrick}: ${answer.text}`).toBeLessThan(500);
      expect(JSON.parse(answer.text)).toMatchObject({ error: expect.any(String), message: expect.any(String) });
      expect(answer.headers['x-correlation-id']).toBeTruthy();
    }
  });

  it('local host: "//api/…" is a path, as "/api//…" is, not a host named api', async () => {
    const answer = await hostCall(routes.healthz, { pathTrick: 'double-slash' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'ok' });
  });
});
