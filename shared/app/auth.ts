import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '../domain/errors';
import { NONCE_TTL_MS, SESSION_TTL_MS, checkSignIn, composeNonce, nonceBody, parseNonce, rolesOf, usedNonceClaimId, type Role, type Session } from '../domain/session';
import type { AppDeps } from './deps';
import { sha256Hex } from './hashing';
import { takeClaim } from './claims';

type AuthDeps = Pick<AppDeps, 'claims' | 'sessions' | 'sessionTokens' | 'signIn' | 'clock' | 'ids' | 'settings'>;

export { sha256Hex };

export const sameSecret = (a: string, b: string) => {
  const left = Buffer.from(sha256Hex(a), 'hex');
  const right = Buffer.from(sha256Hex(b), 'hex');
  return timingSafeEqual(left, right);
};

/** What a nonce is for: one issued for one kind of sign-in is refused by the other (its MAC says which). */
export type NoncePurpose = 'siwe' | 'siwx';
type NonceDeps = Pick<AppDeps, 'claims' | 'sessionTokens' | 'clock' | 'ids'>;

/**
 * A fresh single-use nonce for a wallet's signed message. Nothing is stored: the nonce carries its
 * expiry and this service's MAC; only a used nonce is recorded (until it expires).
 */
export const mintNonce = (deps: NonceDeps, purpose: NoncePurpose) => {
  const expiresAt = deps.clock.now() + NONCE_TTL_MS;
  const body = nonceBody(deps.ids.random(10), expiresAt);
  return { nonce: composeNonce(body, deps.sessionTokens.mac(`${purpose}-nonce:${body}`)), expiresAt };
};

/** A fresh single-use nonce, and what the wallet's message must say to be accepted. */
export const issueNonce = async (deps: AuthDeps) => {
  const { nonce, expiresAt } = mintNonce(deps, 'siwe');
  const { siweDomain, baseUrl, chainId } = deps.settings;
  return { nonce, expiresAt, domain: siweDomain, uri: baseUrl, chainId };
};

const unauthorized = (message: string) => new DomainError('unauthorized', message);

/** Uses up the nonce: one we issued for this purpose, unexpired, and recorded as used exactly once (create-only). */
export const consumeNonce = async (deps: NonceDeps, nonce: string, now: number, purpose: NoncePurpose) => {
  const parsed = parseNonce(nonce);
  if (!parsed || parsed.expiresAt <= now || parsed.expiresAt > now + NONCE_TTL_MS || !sameSecret(parsed.mac, composeNonce('', deps.sessionTokens.mac(`${purpose}-nonce:${parsed.body}`)))) {
    throw unauthorized('sign-in refused: unknown, used or expired nonce');
  }
  const id = usedNonceClaimId(nonce);
  if (!(await takeClaim(deps.claims, { id, owner: purpose, createdAt: now, expiresAt: parsed.expiresAt })).taken) {
    throw unauthorized('sign-in refused: unknown, used or expired nonce');
  }
};

export interface SignedIn {
  wallet: string;
  roles: Role[];
  expiresAt: number;
  token: string;
  csrfToken: string;
}

/** EIP-4361 sign-in: signature, then domain, URI, chain and time, then the single-use nonce. */
export const signIn = async (deps: AuthDeps, input: { message: string; signature: string }): Promise<SignedIn> => {
  const now = deps.clock.now();
  const message = await deps.signIn.verify(input.message, input.signature, now);
  checkSignIn(message, { domain: deps.settings.siweDomain, origin: new URL(deps.settings.baseUrl).origin, chainId: deps.settings.chainId, now });
  await consumeNonce(deps, message.nonce, now, 'siwe');
  const csrfToken = deps.ids.random(24);
  const session: Session = {
    id: `ses_${deps.ids.random(16)}`,
    wallet: message.address,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
    revokedAt: null,
    csrfHash: sha256Hex(csrfToken),
  };
  await deps.sessions.create(session.id, session);
  const token = deps.sessionTokens.issue({ sub: session.wallet, sid: session.id, exp: session.expiresAt });
  return { wallet: session.wallet, roles: rolesOf(session.wallet, deps.settings.adminWallets), expiresAt: session.expiresAt, token, csrfToken };
};

/** The live session behind a cookie token: signed by us, unexpired, not revoked. */
export const resolveSession = async (deps: AuthDeps, token: string | undefined): Promise<Session> => {
  const claims = token ? deps.sessionTokens.verify(token) : undefined;
  if (!claims) throw unauthorized('sign in first: missing or invalid session');
  const stored = await deps.sessions.get(claims.sid, claims.sid);
  const session = stored?.value;
  if (!session || session.wallet !== claims.sub || session.revokedAt !== null || session.expiresAt <= deps.clock.now()) {
    throw unauthorized('sign in again: the session expired or was ended');
  }
  return session;
};

export const signOut = async (deps: AuthDeps, session: Session) => {
  await deps.sessions.upsert(session.id, { ...session, revokedAt: deps.clock.now() });
  return { ok: true as const };
};

export const describeSession = (deps: Pick<AppDeps, 'settings'>, session: Session) => ({
  wallet: session.wallet,
  roles: rolesOf(session.wallet, deps.settings.adminWallets),
  expiresAt: session.expiresAt,
});
