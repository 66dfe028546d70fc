/**
 * The local host: serves the same function handlers as the Functions host, from the same route
 * table, on node:http. In front of them it plays API Management: route match (404), body size (413),
 * key check (401) and the `x-subscription-id` stamp, edge-secret check (403), wallet-hint stripping,
 * the per-address limits of calls without a key (and of the x402 routes) and the correlation id. It
 * sets no CORS headers: the buyer's pages call it on their own origin. It holds no business rule.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpResponseInit } from '@azure/functions';
import type { AppDeps } from '../../shared/app/deps';
import { hashApiKey } from '../../shared/app/hashing';
import { serializeCookie } from '../../shared/http/cookies';
import { toErrorResponse } from '../../shared/http/errors';
import { DomainError } from '../../shared/domain/errors';
import { SUBSCRIPTION_CACHE_LIMITS, SUBSCRIPTION_FALLBACK_MS } from '../../shared/http/auth';
import { BoundedCache } from '../../shared/app/bounded-cache';
import { StoreUnavailableError } from '../../shared/ports/errors';
import {
  API_KEY_HEADERS,
  CORRELATION_HEADER,
  EDGE_SECRET_HEADER,
  MAX_BODY_BYTES,
  SUBSCRIPTION_HEADER,
  WALLET_HEADERS,
  correlationIdFor,
  jsonHeaders,
} from '../../shared/http/headers';
import type { HttpFunction } from '../../shared/http/function';
import { CLIENT_ADDRESS_HEADER, type IncomingCall } from '../../shared/http/incoming';
import { matchRoute, type RouteSpec } from '../../shared/http/routes';

export interface LocalHostOptions {
  deps: AppDeps;
  routes: RouteSpec[];
  functions: Map<string, HttpFunction>;
  log?: (line: string) => void;
}

const KEY_CACHE_MS = 2_000;

const EMPTY = Buffer.alloc(0);

/** HTTP/1.1: a request without Content-Length or Transfer-Encoding has no body. */
const hasBody = (request: IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0';

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  !hasBody(request)
    ? Promise.resolve(EMPTY)
    : new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new DomainError('payload_too_large', `request bodies are limited to ${MAX_BODY_BYTES} bytes`));
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

const firstHeader = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * The request target as a URL. An origin-form target is a path: `//x:1/api/…` names no host (as a
 * relative URL it would, and an invalid one would throw). A target no URL parser takes is 400.
 */
const targetUrl = (target: string): URL => {
  try {
    return new URL(target.startsWith('/') ? `http://localhost${target}` : target, 'http://localhost');
  } catch {
    throw new DomainError('bad_request', 'the request target is not a valid URL');
  }
};

/** What the handler answered, as the bytes to send: text, or a file's bytes as they are (an `Asset`'s Uint8Array). */
const bodyBytes = (body: HttpResponseInit['body']): string | Uint8Array => {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return String(body);
};

export const createLocalHost = ({ deps, routes, functions, log = () => {} }: LocalHostOptions): Server => {
  const keyCache = new BoundedCache<string | undefined>(SUBSCRIPTION_CACHE_LIMITS);

  /** APIM's key check: the subscription id a key belongs to. Revocation is the backend's to enforce. */
  const subscriptionIdFor = async (apiKey: string): Promise<string | undefined> => {
    const hash = hashApiKey(apiKey);
    const now = Date.now();
    const hit = keyCache.get(hash);
    if (hit && now - hit.at < KEY_CACHE_MS) return hit.value;
    let id: string | undefined;
    try {
      id = await deps.subscriptions.findIdByKeyHash(hash);
    } catch (error) {
      // Like API Management, which validates keys without the store: known keys keep working in an outage.
      if (error instanceof StoreUnavailableError && hit && now - hit.at < SUBSCRIPTION_FALLBACK_MS) return hit.value;
      throw error;
    }
    keyCache.set(hash, id, now);
    return id;
  };

  const gateway = async (request: IncomingMessage, correlationId: string): Promise<HttpResponseInit> => {
    const url = targetUrl(request.url ?? '/');
    const matched = matchRoute(routes, request.method ?? 'GET', url.pathname);
    const handler = matched && functions.get(matched.route.name)?.call;
    if (!matched || !handler) throw new DomainError('not_found', `no route for ${request.method} ${url.pathname}`);
    if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
      throw new DomainError('payload_too_large', `request bodies are limited to ${MAX_BODY_BYTES} bytes`);
    }
    const body = await readBody(request);
    if (matched.route.auth.kind !== 'key') {
      // API Management's per-address limit on every route without a key, and its tighter one, a counter
      // of their own, on the x402 routes.
      const address = request.socket.remoteAddress ?? 'unknown';
      const decision = deps.rateLimiter.hit(`client:${address}`, deps.settings.keylessRateLimitPerMinute, Date.now());
      if (!decision.allowed) throw new DomainError('rate_limited', 'too many calls from this address; slow down', { resetAt: decision.resetAt });
      if (matched.route.auth.kind === 'x402') {
        const paid = deps.rateLimiter.hit(`x402:${address}`, deps.settings.x402RateLimitPerMinute, Date.now());
        if (!paid.allowed) throw new DomainError('rate_limited', 'too many x402 calls from this address; slow down', { resetAt: paid.resetAt });
      }
    }

    const headers = new Map<string, string>();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    for (const name of [...WALLET_HEADERS, SUBSCRIPTION_HEADER]) headers.delete(name);
    url.searchParams.delete('wallet');
    headers.set(CORRELATION_HEADER, correlationId);
    // As API Management does: the peer the call came from is the client's address, set over whatever
    // the client sent (clientAddressOf).
    const peer = (request.socket.remoteAddress ?? '').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
    headers.delete(CLIENT_ADDRESS_HEADER);
    if (peer) headers.set(CLIENT_ADDRESS_HEADER, peer);

    if (matched.route.auth.kind === 'key') {
      const apiKey = API_KEY_HEADERS.map((name) => firstHeader(request.headers[name])).find(Boolean);
      const id = apiKey ? await subscriptionIdFor(apiKey) : undefined;
      if (!id) throw new DomainError('unauthorized', 'missing or invalid subscription key');
      headers.set(SUBSCRIPTION_HEADER, id);
    }
    const edgeSecret = firstHeader(request.headers[EDGE_SECRET_HEADER]);
    if (edgeSecret !== undefined && edgeSecret !== deps.settings.edgeSecret) {
      throw new DomainError('forbidden', 'x-edge-secret is for the edge proxy only');
    }
    headers.delete(EDGE_SECRET_HEADER);

    const call: IncomingCall = {
      method: request.method ?? 'GET',
      headers: { get: (name) => headers.get(name.toLowerCase()) ?? null },
      query: url.searchParams,
      params: matched.params,
      // Already read within the gateway's limit; the same limit applies again for the handler.
      text: async (maxBytes) => {
        if (body.length > maxBytes) throw new DomainError('payload_too_large', `request bodies are limited to ${maxBytes} bytes`);
        return body.toString('utf8');
      },
    };
    return handler(call, (message, error) => log(`${matched.route.name}: ${message}: ${error instanceof Error ? error.stack : String(error)}`));
  };

  const respond = (response: ServerResponse, result: HttpResponseInit) => {
    const headers: Record<string, string | string[]> = { ...((result.headers ?? {}) as Record<string, string>) };
    if (result.cookies?.length) headers['set-cookie'] = result.cookies.map(serializeCookie);
    response.writeHead(result.status ?? 200, headers);
    response.end(bodyBytes(result.body));
  };

  const server = createServer((request, response) => {
    const correlationId = correlationIdFor(firstHeader(request.headers[CORRELATION_HEADER]));
    gateway(request, correlationId).then(
      (result) => respond(response, result),
      (error: unknown) => {
        const { status, body, headers, unexpected } = toErrorResponse(error);
        if (unexpected) log(`gateway error: ${error instanceof Error ? error.stack : String(error)}`);
        // Keep-alive is unsafe when a body was left unread.
        if (status === 413) response.setHeader('connection', 'close');
        respond(response, { status, body: JSON.stringify(body), headers: jsonHeaders(correlationId, headers) });
      },
    );
  });
  // Requests node:http cannot parse (a bad request line, a path not starting with "/", headers or URL too
  // large) never reach the handler: answer them in the same error shape, with a correlation id.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const { status, body } = toErrorResponse(protocolError(error));
    const text = JSON.stringify(body);
    const headers = { ...jsonHeaders(correlationIdFor(undefined)), 'content-length': String(Buffer.byteLength(text)), connection: 'close' };
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\r\n');
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}\r\n\r\n${text}`);
  });
  return server;
};

const protocolError = (error: NodeJS.ErrnoException) => {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new DomainError('headers_too_large', 'the request line and headers are too large');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new DomainError('request_timeout', 'the request took too long to arrive');
  return new DomainError('bad_request', 'the request is not well-formed HTTP/1.1');
};
