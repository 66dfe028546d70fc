import { verifySignInWithX } from '../app/x402/siwx';
import { X402_HEADERS } from '../domain/x402';
import type { AppDeps } from '../app/deps';
import { resolveSession, sameSecret, sha256Hex } from '../app/auth';
import { BoundedCache } from '../app/bounded-cache';
import { countKeyUse } from '../app/usage';
import { DomainError } from '../domain/errors';
import { isId } from '../domain/ids';
import { ID_PATTERN } from '../domain/query-params';
import { StoreUnavailableError } from '../ports/errors';
import { rolesOf, type Role, type Session } from '../domain/session';
import { hasScope, type Scope, type Subscription } from '../domain/subscription';
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, parseCookies } from './cookies';
import type { IncomingCall } from './incoming';
import { SUBSCRIPTION_HEADER } from './headers';
import type { RouteSpec } from './routes';

export interface Access {
  subscription: Subscription | undefined;
  session: Session | undefined;
  /** The rate-limit headers of a `key` route, to send on every answer, 429 included. */
  headers: Record<string, string>;
  /** Set when the plan's quota is spent: the Unix ms when it renews. */
  limitedUntil?: number;
  /** The wallet a sign-in-with-x proof named, on a key route that takes one instead of a key. */
  wallet?: string;
}

const cache = new WeakMap<AppDeps, BoundedCache<Subscription | undefined>>();
/** Subscription records are small; ids are checked before lookup, so keys are short. */
export const SUBSCRIPTION_CACHE_LIMITS = { maxEntries: 10_000, maxBytes: 8 * 1024 * 1024, sizeOf: (value: unknown) => 2 * (JSON.stringify(value)?.length ?? 4) };

/** While the store is unreachable, a record read this recently still answers (known keys keep working). */
export const SUBSCRIPTION_FALLBACK_MS = 5 * 60 * 1000;

/** The subscription record behind a gateway-stamped id, kept in memory for a short while. */
const loadSubscription = async (deps: AppDeps, id: string): Promise<Subscription | undefined> => {
  let entries = cache.get(deps);
  if (!entries) cache.set(deps, (entries = new BoundedCache<Subscription | undefined>(SUBSCRIPTION_CACHE_LIMITS)));
  const now = deps.clock.now();
  const hit = entries.get(id);
  if (hit && now - hit.at < deps.settings.subscriptionCacheMs) return hit.value;
  let subscription: Subscription | undefined;
  try {
    subscription = ID_PATTERN.test(id) ? await deps.subscriptions.get(id) : undefined;
  } catch (error) {
    if (error instanceof StoreUnavailableError && hit && now - hit.at < SUBSCRIPTION_FALLBACK_MS) return hit.value;
    throw error;
  }
  entries.set(id, subscription, now);
  return subscription;
};

export const rateLimitHeaders = (decision: { limit: number; remaining: number; resetAt: number }) => ({
  'x-ratelimit-limit': String(decision.limit),
  'x-ratelimit-remaining': String(Math.max(0, decision.remaining)),
  'x-ratelimit-reset': String(decision.resetAt),
});

/** Key use is recorded at most this often per key, off the request's path. */
const TOUCH_EVERY_MS = 5 * 60 * 1000;
const touched = new WeakMap<AppDeps, BoundedCache<true>>();
const TOUCH_LIMITS = { maxEntries: 10_000, maxBytes: 1024 * 1024, sizeOf: () => 8 };

const noteKeyUse = (deps: AppDeps, subscription: Subscription, now: number) => {
  let last = touched.get(deps);
  if (!last) touched.set(deps, (last = new BoundedCache(TOUCH_LIMITS)));
  const previous = Math.max(last.get(subscription.id)?.at ?? 0, subscription.lastUsedAt ?? 0);
  if (now - previous < TOUCH_EVERY_MS) return;
  last.set(subscription.id, true, now);
  deps.subscriptions.touch(subscription.id, now).catch(() => last.delete(subscription.id));
};

const forbidden = (message: string) => new DomainError('forbidden', message);

/**
 * Whether a write comes from this site's own pages: its `Origin` is the configured site's. A browser
 * may send no Origin on a same-origin request (Chromium's fetch does not), or `null` under the pages'
 * no-referrer policy; then its Fetch Metadata decides: `Sec-Fetch-Site: same-origin`, a header no
 * page can set. Any other Origin, or neither, is refused.
 */
const fromThisSite = (deps: AppDeps, request: IncomingCall) => {
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== 'null') return origin === new URL(deps.settings.baseUrl).origin;
  return request.headers.get('sec-fetch-site') === 'same-origin';
};

const requireThisSite = (deps: AppDeps, request: IncomingCall) => {
  if (!fromThisSite(deps, request)) throw forbidden('cross-site request refused: Origin must be this site');
};

/**
 * Admin writes must come from our own pages (`fromThisSite`), and the CSRF token in the header
 * equals the cookie and is the one issued with this session.
 */
const checkCsrf = (deps: AppDeps, request: IncomingCall, cookies: Record<string, string>, session: Session) => {
  requireThisSite(deps, request);
  const header = request.headers.get(CSRF_HEADER) ?? '';
  const cookie = cookies[CSRF_COOKIE] ?? '';
  if (!header || !sameSecret(header, cookie) || !sameSecret(sha256Hex(header), session.csrfHash)) {
    throw forbidden(`missing or wrong ${CSRF_HEADER} header`);
  }
};

const authorizeSession = async (deps: AppDeps, role: Role, request: IncomingCall, method: string): Promise<Access> => {
  const cookies = parseCookies(request.headers.get('cookie'));
  const session = await resolveSession(deps, cookies[SESSION_COOKIE]);
  if (!rolesOf(session.wallet, deps.settings.adminWallets).includes(role)) {
    throw forbidden(`this needs the ${role} role`);
  }
  if (method !== 'GET' && method !== 'HEAD') checkCsrf(deps, request, cookies, session);
  return { subscription: undefined, session, headers: {} };
};

/**
 * A page that also answers without a session (the console's sign-in page): a missing, forged, ended
 * or expired session is no caller rather than 401. Anything else (a store outage, a wallet without
 * the role) fails as it would on any session route.
 */
const authorizeOptionalSession = async (deps: AppDeps, role: Role, request: IncomingCall, method: string): Promise<Access> => {
  try {
    return await authorizeSession(deps, role, request, method);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'unauthorized') return { subscription: undefined, session: undefined, headers: {} };
    throw error;
  }
};

/**
 * Who is calling. `key` routes: the gateway's `x-subscription-id` stamp (never a client wallet), then
 * status (401) and scope (403), and the request counts against the plan's quota and, once let
 * through, in the key's usage for the billing period. `session` routes:
 * the signed session cookie (401), the role (403) and, for writes, Origin and CSRF token (403).
 * `public` routes: anyone; a `fromThisSite` write (sign-in) only with this site's Origin (403).
 * `portal` routes: anyone, within a per-receipt limit. `x402` routes: anyone; the use case gates
 * itself with `requirePayment` (shared/app/x402/gate.ts), after checking its input, so a request
 * that could never be served answers its 4xx rather than a payment challenge.
 */
export const authorize = async (deps: AppDeps, spec: RouteSpec, request: IncomingCall, method: string): Promise<Access> => {
  const auth = spec.auth;
  switch (auth.kind) {
    case 'public':
      if (auth.fromThisSite && method !== 'GET' && method !== 'HEAD') requireThisSite(deps, request);
      return { subscription: undefined, session: undefined, headers: {} };
    case 'session':
      if (auth.optional && method === 'GET') return authorizeOptionalSession(deps, auth.role, request, method);
      return authorizeSession(deps, auth.role, request, method);
    case 'portal':
      return authorizePortal(deps, request);
    case 'x402':
      return { subscription: undefined, session: undefined, headers: {} };
    case 'key':
      // Without a key, a route that takes sign-in-with-x reads the wallet from its proof (401 if it does not hold).
      if (auth.signInWithX && !request.headers.get(SUBSCRIPTION_HEADER) && request.headers.get(X402_HEADERS.signInWithX)) {
        const proof = await verifySignInWithX(deps, request.headers, { resource: `${deps.settings.baseUrl}${spec.path}` });
        if (proof) return { subscription: undefined, session: undefined, headers: {}, wallet: proof.wallet };
      }
      return authorizeKey(deps, auth.scope, request);
  }
};

/** Buyers' pages are public, but each receipt may be asked about only so often (the gateway limits each address too). */
const authorizePortal = (deps: AppDeps, request: IncomingCall): Access => {
  const receiptId = request.params.id ?? '';
  // An id no receipt can have is answered not found without a counter: random long ids would each
  // hold one in memory for a minute.
  if (!isId(receiptId)) return { subscription: undefined, session: undefined, headers: {} };
  const decision = deps.rateLimiter.hit(`portal:${receiptId}`, deps.settings.portalRateLimitPerMinute, deps.clock.now());
  return { subscription: undefined, session: undefined, headers: {}, ...(!decision.allowed && { limitedUntil: decision.resetAt }) };
};

const authorizeKey = async (deps: AppDeps, scope: Scope | undefined, request: IncomingCall): Promise<Access> => {
  const id = request.headers.get(SUBSCRIPTION_HEADER);
  const subscription = id ? await loadSubscription(deps, id) : undefined;
  if (!subscription || subscription.status !== 'active') {
    throw new DomainError('unauthorized', 'missing or invalid subscription key');
  }
  if (scope && !hasScope(subscription, scope)) {
    throw forbidden(`this key lacks the scope ${scope}`);
  }
  const now = deps.clock.now();
  noteKeyUse(deps, subscription, now);
  const decision = deps.rateLimiter.hit(subscription.id, deps.settings.planQuotas[subscription.plan], now);
  // Billing counts the requests the quota lets through (shared/app/usage.ts); a 429 is not one.
  if (decision.allowed) countKeyUse(deps, subscription, now);
  return {
    subscription,
    session: undefined,
    headers: rateLimitHeaders(decision),
    ...(!decision.allowed && { limitedUntil: decision.resetAt }),
  };
};
