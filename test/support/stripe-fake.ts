/**
 * A local stand-in for the Stripe API's crypto on-ramp, on a free loopback port: it serves
 * `POST /v1/crypto/onramp_sessions` as Stripe does (Bearer key, form body, a session object or a
 * Stripe-shaped error), records every request, and signs `crypto.onramp_session_updated` webhooks
 * for its sessions with the SDK's own test header.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The form body, decoded: `wallet_addresses[base_network]` → value. */
  form: Record<string, string>;
}

export interface StripeError {
  status: number;
  type?: string;
  code?: string;
  message: string;
}

export type SessionStatus = 'initialized' | 'requires_payment' | 'fulfillment_processing' | 'fulfillment_complete' | 'rejected';

export interface FakeSession {
  id: string;
  object: 'crypto.onramp_session';
  client_secret: string;
  created: number;
  livemode: boolean;
  metadata: Record<string, string>;
  redirect_url: string | null;
  status: SessionStatus;
  transaction_details: Record<string, unknown>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** `a[b][0]=c` form fields as Stripe's own parser reads them, kept flat for assertions. */
const decodeForm = (body: string): Record<string, string> => Object.fromEntries(new URLSearchParams(body));

/** The `name[key]` fields of a flat form, as an object. */
const nested = (form: Record<string, string>, name: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(form)
      .filter(([key]) => key.startsWith(`${name}[`) && key.endsWith(']'))
      .map(([key, value]) => [key.slice(name.length + 1, -1), value]),
  );

const list = (form: Record<string, string>, name: string) => Object.values(nested(form, name));

export interface StripeFakeOptions {
  /** The key requests must carry as `Authorization: Bearer <key>`. */
  secretKey: string;
  /** The session's `redirect_url`; default a page on the fake's own origin (nothing leaves loopback). */
  redirectUrl?: (sessionId: string) => string | null;
}

export const startStripeFake = async (options: StripeFakeOptions) => {
  const requests: FakeRequest[] = [];
  const sessions = new Map<string, FakeSession>();
  const failures: StripeError[] = [];
  let origin = '';

  const answer = (response: import('node:http').ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req'), ...headers }).end(JSON.stringify(body));
  };
  const error = (response: import('node:http').ServerResponse, failure: StripeError) =>
    answer(response, failure.status, {
      error: { type: failure.type ?? (failure.status >= 500 ? 'api_error' : 'invalid_request_error'), ...(failure.code && { code: failure.code }), message: failure.message },
    });

  const createSession = (form: Record<string, string>): FakeSession => {
    const sessionId = id('cos');
    const session: FakeSession = {
      id: sessionId,
      object: 'crypto.onramp_session',
      client_secret: `${sessionId}_secret_${randomBytes(16).toString('hex')}`,
      created: Math.floor(Date.now() / 1000),
      livemode: options.secretKey.includes('_live_'),
      metadata: nested(form, 'metadata'),
      redirect_url: options.redirectUrl ? options.redirectUrl(sessionId) : `${origin}/onramp/${sessionId}`,
      status: 'initialized',
      transaction_details: {
        destination_amount: form.destination_amount ?? null,
        destination_currencies: list(form, 'destination_currencies'),
        destination_currency: form.destination_currency ?? null,
        destination_network: form.destination_network ?? null,
        destination_networks: list(form, 'destination_networks'),
        fees: null,
        lock_wallet_address: form.lock_wallet_address === 'true',
        source_amount: null,
        source_currency: form.source_currency ?? null,
        transaction_id: null,
        wallet_address: null,
        wallet_addresses: nested(form, 'wallet_addresses'),
      },
    };
    sessions.set(sessionId, session);
    return session;
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://fake');
      const form = decodeForm(Buffer.concat(chunks).toString('utf8'));
      requests.push({ method: request.method ?? '', path: url.pathname, headers: request.headers, form });
      if (request.headers.authorization !== `Bearer ${options.secretKey}`) {
        return error(response, { status: 401, message: `Invalid API Key provided: ${String(request.headers.authorization ?? '').replace(/^Bearer /, '').slice(0, 12)}…` });
      }
      if (request.method !== 'POST' || url.pathname !== '/v1/crypto/onramp_sessions') {
        return error(response, { status: 404, message: `Unrecognized request URL (${request.method}: ${url.pathname}).` });
      }
      const failure = failures.shift();
      if (failure) return error(response, failure);
      if (request.headers['content-type'] !== 'application/x-www-form-urlencoded') {
        return error(response, { status: 400, message: 'Expected a form-encoded body.' });
      }
      answer(response, 200, createSession(form));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;

  return {
    /** What the adapter's Stripe options take to reach this fake. */
    connection: { host: '127.0.0.1', port, protocol: 'http' as const },
    origin,
    requests,
    sessions,
    /** The next session creations answer these errors, in order (then sessions again). */
    fail: (...next: StripeError[]) => void failures.push(...next),
    close: () => new Promise<void>((resolve, reject) => server.close((closed) => (closed ? reject(closed) : resolve()))),
  };
};

export type StripeFake = Awaited<ReturnType<typeof startStripeFake>>;

/**
 * The session as its `crypto.onramp_session_updated` event carries it at `status`: what Stripe fills
 * in by then (the amount charged once paid, the delivery's transaction once sent), with overrides.
 */
export const sessionAt = (session: FakeSession, status: SessionStatus, details: Record<string, unknown> = {}): FakeSession => {
  const paid = status === 'fulfillment_processing' || status === 'fulfillment_complete';
  return {
    ...session,
    status,
    transaction_details: {
      ...session.transaction_details,
      ...(paid && { source_amount: '12.87', source_currency: 'usd' }),
      ...(status === 'fulfillment_complete' && { transaction_id: `0x${'Ab'.repeat(32)}` }),
      ...details,
    },
  };
};

export interface StripeEventOptions {
  type?: string;
  eventId?: string;
  /** Unix seconds; default now. */
  created?: number;
  /** The API request that caused it; null for Stripe's own changes. */
  requestId?: string | null;
}

/** A Stripe event around `object`, as Stripe's webhook sends it (JSON text). */
export const stripeEventBody = (object: unknown, options: StripeEventOptions = {}) =>
  JSON.stringify({
    id: options.eventId ?? id('evt'),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: options.created ?? Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: options.requestId === undefined ? null : options.requestId, idempotency_key: null },
    type: options.type ?? 'crypto.onramp_session_updated',
  });

/** `body` signed as Stripe signs a webhook (the SDK's test header), at `timestamp` (Unix seconds; default now). */
export const signStripeWebhook = (body: string, secret: string, timestamp = Math.floor(Date.now() / 1000)) => ({
  body,
  headers: new Headers({ 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp }) }),
});

/** A signed `crypto.onramp_session_updated` webhook for `session` at `status`. */
export const stripeSessionWebhook = (
  session: FakeSession,
  status: SessionStatus,
  options: StripeEventOptions & { secret: string; timestamp?: number; details?: Record<string, unknown> },
) => signStripeWebhook(stripeEventBody(sessionAt(session, status, options.details), options), options.secret, options.timestamp);
