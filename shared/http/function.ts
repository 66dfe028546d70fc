import type { Cookie, HttpFunctionOptions, HttpRequest, HttpResponseInit } from '@azure/functions';
import type { z } from 'zod';
import type { AppDeps } from '../app/deps';
import { BoundedCache } from '../app/bounded-cache';
import { DomainError, describeZodError } from '../domain/errors';
import type { Session } from '../domain/session';
import type { Subscription } from '../domain/subscription';
import { getDeps } from '../composition';
import { authorize } from './auth';
import { toErrorResponse } from './errors';
import { CORRELATION_HEADER, MAX_BODY_BYTES, jsonHeaders, correlationIdFor } from './headers';
import { MAX_JSON_DEPTH, jsonDepthExceeds, toJson } from './json';
import { htmlErrorPage, pageHeaders } from './html';
import type { IncomingCall } from './incoming';
import type { PathParams, RouteAuth, RouteSpec } from './routes';

/**
 * Who is calling, by the route's auth kind: a `key` route's handler gets the subscription, a `session`
 * route's the session, each with the caller's wallet (from the record, never from the client); other
 * kinds name no caller.
 */
export type CallerOf<A extends RouteAuth> = A extends { kind: 'key'; signInWithX: true }
  ? { subscription?: Subscription; session?: undefined; wallet: string }
  : A extends { kind: 'key' }
  ? { subscription: Subscription; session?: undefined; wallet: string }
  : A extends { kind: 'session'; optional: true }
    ? { session?: Session; subscription?: undefined; wallet?: string }
  : A extends { kind: 'session' }
    ? { session: Session; subscription?: undefined; wallet: string }
    : { subscription?: undefined; session?: undefined; wallet?: undefined };

export type RequestContext<Q, B, A extends RouteAuth = RouteAuth, P extends string = string> = CallerOf<A> & {
  deps: AppDeps;
  query: Q;
  body: B;
  /** The path's `{param}` values, decoded. */
  params: PathParams<P>;
  /** The request's headers (a payment proof, a sign-in-with-x credential). */
  headers: IncomingCall['headers'];
  /** The body exactly as received (a provider's webhook signature covers these bytes); empty for routes without a body. */
  rawBody: string;
  correlationId: string;
};

/** A use case's answer when it needs a status other than the route's success status, or cookies. */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
    readonly cookies: Cookie[] = [],
    /** Headers of this answer beyond the route's own (an x402 challenge's `PAYMENT-REQUIRED`, say). */
    readonly headers: Record<string, string> = {},
  ) {}
}

/** A file a route answers (`responseKind: 'asset'`): its type, bytes and cache policy. */
export class Asset {
  constructor(
    readonly contentType: string,
    readonly body: string | Uint8Array,
    readonly cacheControl = 'no-store',
  ) {}
}

type Input<T> = T extends z.ZodType ? z.output<T> : undefined;
export type UseCaseCall<Q, B, R, A extends RouteAuth = RouteAuth, P extends string = string> = (context: RequestContext<Q, B, A, P>) => Promise<R | Reply<R> | Asset>;

/**
 * Reads a body stream up to a byte limit: a client streaming gigabytes (chunked, no Content-Length)
 * costs at most the limit before it is refused, and nothing else runs first.
 */
export const readLimitedText = async (body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> => {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
};

/** The Functions runtime's request, read through the same limits as the local host's. */
const fromFunctionsRequest = (request: HttpRequest): IncomingCall => ({
  method: request.method,
  headers: request.headers,
  query: request.query,
  params: request.params,
  text: (maxBytes) => readLimitedText(request.body as ReadableStream<Uint8Array> | null, maxBytes),
});

export type CallHandler = (request: IncomingCall, logError: (message: string, error: unknown) => void) => Promise<HttpResponseInit>;

export interface HttpFunction {
  /** What `app.http` registers with the Functions host. */
  options: HttpFunctionOptions;
  /** The same handler on the minimal request shape: what the local host mounts. */
  call: CallHandler;
}

/** Every HTTP function by name, filled as function files load (`app.http` registers nothing outside Azure). */
export const httpFunctions = new Map<string, HttpFunction>();

/** Parsed query strings by route: most calls repeat a few queries, and parsing is the costly part. */
const parsedQueries = new BoundedCache<unknown>({ maxEntries: 2_000, maxBytes: 4 * 1024 * 1024, sizeOf: (value) => 2 * (JSON.stringify(value)?.length ?? 4) });

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
};

const parseQuery = (spec: RouteSpec, request: IncomingCall): unknown => {
  if (!spec.query) return undefined;
  const key = `${spec.name}?${request.query.toString()}`;
  const cached = parsedQueries.get(key);
  if (cached) return cached.value;
  const raw: Record<string, string> = {};
  request.query.forEach((value, key) => {
    if (key !== 'wallet' && !(key in raw)) raw[key] = value;
  });
  const parsed = spec.query.safeParse(raw);
  if (!parsed.success) throw zodInvalid(parsed.error);
  // Shared between calls: frozen, so no use case can change what the next call receives.
  parsedQueries.set(key, deepFreeze(parsed.data), 0);
  return parsed.data;
};

/**
 * The path's values its route checks (`params`: the id rule for every one that names a document). A
 * value that fails names nothing this service could hold: 404, as an unknown id would be, and it
 * never reaches a use case or the store.
 */
const checkParams = (spec: RouteSpec, params: Record<string, string>) => {
  for (const [name, schema] of Object.entries(spec.params ?? {}) as Array<[string, z.ZodType]>) {
    const parsed = schema.safeParse(params[name]);
    if (!parsed.success) throw new DomainError('not_found', `${name}: ${parsed.error.issues[0]?.message ?? 'names nothing here'}`, { field: name });
  }
};

const zodInvalid = (error: z.ZodError, root?: string) => {
  const { field, message } = describeZodError(error, root);
  return new DomainError('invalid_input', message, { field });
};

const readBody = async (spec: RouteSpec, request: IncomingCall): Promise<unknown> => {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (!spec.body) return undefined;
  return request.text(MAX_BODY_BYTES);
};

const mediaType = (contentType: string | null) => contentType?.split(';')[0]?.trim().toLowerCase();
const isForm = (contentType: string | null) => mediaType(contentType) === 'application/x-www-form-urlencoded';

const parseBody = (spec: RouteSpec, text: unknown, contentType: string | null): unknown => {
  if (!spec.body) return undefined;
  // A page on another site can post text/plain, a form or multipart without asking; JSON it cannot.
  if (spec.auth.kind === 'public' && spec.auth.fromThisSite && mediaType(contentType) !== 'application/json') {
    throw new DomainError('invalid_input', 'body: must be sent as application/json', { field: 'body' });
  }
  if (spec.formBody && typeof text === 'string' && isForm(contentType)) {
    // A form's fields, each named once (a repeated name keeps its first value), as strings.
    const fields: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(text)) if (!Object.hasOwn(fields, name) && name !== '__proto__') fields[name] = value;
    const parsed = spec.body.safeParse(fields);
    if (!parsed.success) throw zodInvalid(parsed.error);
    return parsed.data;
  }
  if (typeof text !== 'string' || text.trim() === '') throw new DomainError('invalid_input', 'body: a JSON body is required', { field: 'body' });
  if (jsonDepthExceeds(text)) {
    throw new DomainError('invalid_input', `body: nests deeper than ${MAX_JSON_DEPTH} levels`, { field: 'body' });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new DomainError('invalid_input', 'body: is not valid JSON', { field: 'body' });
  }
  if (hasProtoKey(text, json)) {
    // Copying such an object sets its prototype instead of keeping the key: refused, never silently dropped.
    throw new DomainError('invalid_input', 'body: the key __proto__ is not allowed', { field: 'body' });
  }
  const parsed = spec.body.safeParse(json);
  if (!parsed.success) throw zodInvalid(parsed.error);
  return parsed.data;
};

/** Whether a parsed body has a `__proto__` key anywhere (only looked for when the text could hold one). */
const hasProtoKey = (text: string, json: unknown): boolean => {
  if (!text.includes('__proto__') && !text.includes('\\u')) return false;
  const visit = (value: unknown): boolean => {
    if (value === null || typeof value !== 'object') return false;
    if (Array.isArray(value)) return value.some(visit);
    return Object.keys(value).some((key) => key === '__proto__' || visit((value as Record<string, unknown>)[key]));
  };
  return visit(json);
};

/** An error page needs the frame policy even when configuration could not be read. */
const tryFrameAncestors = () => {
  try {
    return getDeps().settings.frameAncestors;
  } catch {
    return "'none'";
  }
};

/** A write accepted into the outbox while the store is down answers 200, whatever its usual status. */
const isDegraded = (body: unknown) => typeof body === 'object' && body !== null && (body as { degraded?: unknown }).degraded === true;

const tooLarge = () => new DomainError('payload_too_large', `request bodies are limited to ${MAX_BODY_BYTES} bytes`);

/**
 * Builds the Functions registration for a route: body size, identity, scope and rate limit, input
 * validation, the use case, and the single error mapping, in the service's fixed order (404, 413, 401, 403, 429, 400).
 */
export const httpFunction = <Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType, A extends RouteAuth, P extends string>(
  spec: RouteSpec<Q, B, R, A, P>,
  call: UseCaseCall<Input<Q>, Input<B>, z.input<R>, A, P>,
): HttpFunctionOptions => {
  const html = spec.responseKind === 'html';
  const asset = spec.responseKind === 'asset';
  const handler: CallHandler = async (request, logError) => {
    const correlationId = correlationIdFor(request.headers.get(CORRELATION_HEADER));
    let limitHeaders: Record<string, string> = {};
    try {
      const deps = getDeps();
      const bodyText = await readBody(spec, request);
      const access = await authorize(deps, spec, request, request.method);
      limitHeaders = access.headers;
      if (access.limitedUntil !== undefined) {
        throw new DomainError('rate_limited', 'rate limit exceeded', { resetAt: access.limitedUntil });
      }
      const caller = access.subscription
        ? { subscription: access.subscription, wallet: access.subscription.wallet }
        : access.session
          ? { session: access.session, wallet: access.session.wallet }
          : access.wallet
            ? { wallet: access.wallet }
            : {};
      checkParams(spec, request.params);
      const context = {
        ...caller,
        deps,
        query: parseQuery(spec, request) as Input<Q>,
        body: parseBody(spec, bodyText, request.headers.get('content-type')) as Input<B>,
        params: request.params as PathParams<P>,
        headers: request.headers,
        rawBody: typeof bodyText === 'string' ? bodyText : '',
        correlationId,
      } as RequestContext<Input<Q>, Input<B>, A, P>;
      const result = await call(context);
      if (asset && result instanceof Asset) {
        return {
          status: 200,
          body: result.body,
          headers: {
            'content-type': result.contentType,
            'cache-control': result.cacheControl,
            'x-content-type-options': 'nosniff',
            'cross-origin-resource-policy': 'same-origin',
            [CORRELATION_HEADER]: correlationId,
            ...limitHeaders,
          },
        };
      }
      const reply = result instanceof Reply ? result : new Reply(isDegraded(result) ? 200 : (spec.successStatus ?? 200), result);
      const headers = html
        ? pageHeaders(correlationId, deps.settings.frameAncestors, { ...limitHeaders, ...reply.headers })
        : jsonHeaders(correlationId, { ...limitHeaders, ...reply.headers });
      return {
        status: reply.status,
        body: html ? String(reply.body) : toJson(reply.body),
        headers,
        ...(reply.cookies.length > 0 && { cookies: reply.cookies }),
      };
    } catch (error) {
      const { status, body, headers, unexpected } = toErrorResponse(error);
      if (unexpected) logError(`${spec.name} failed`, error);
      if (html) {
        const frameAncestors = tryFrameAncestors();
        return { status, body: htmlErrorPage(status, body), headers: pageHeaders(correlationId, frameAncestors, { ...limitHeaders, ...headers }) };
      }
      return { status, body: JSON.stringify(body), headers: jsonHeaders(correlationId, { ...limitHeaders, ...headers }) };
    }
  };
  const options: HttpFunctionOptions = {
    methods: [spec.method],
    route: spec.path.slice(1),
    authLevel: 'function',
    handler: (request, context) => handler(fromFunctionsRequest(request), (message, error) => context.error(message, error)),
  };
  httpFunctions.set(spec.name, { options, call: handler });
  return options;
};
