import { DomainError } from './errors';

export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;
export const NONCE_TTL_MS = 5 * 60 * 1000;
/** How far a wallet's clock may run ahead when it stamps `Issued At`. */
export const CLOCK_SKEW_MS = 60 * 1000;

export type Role = 'merchant' | 'admin';

export interface Session {
  id: string;
  wallet: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** SHA-256 of the CSRF token issued with the session: the token is bound to this session. */
  csrfHash: string;
}

/** What the session cookie carries (signed): who, which session, until when. */
export interface SessionClaims {
  sub: string;
  sid: string;
  exp: number;
}

/** The fields of an EIP-4361 message that the service checks, after its signature is verified. */
export interface SignInMessage {
  address: string;
  domain: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: number;
  expirationTime: number | undefined;
  notBefore: number | undefined;
}

export interface SignInExpectations {
  domain: string;
  /** The configured base URL's origin; the message URI must be on it. */
  origin: string;
  chainId: number;
  now: number;
}

const refuse = (reason: string) => new DomainError('unauthorized', `sign-in refused: ${reason}`);

/** The checks a valid signature alone does not make: right site, right chain, still fresh. */
export const checkSignIn = (message: SignInMessage, expected: SignInExpectations): void => {
  if (message.domain !== expected.domain) throw refuse(`domain must be ${expected.domain}`);
  let origin: string;
  try {
    origin = new URL(message.uri).origin;
  } catch {
    throw refuse('uri is not a URL');
  }
  if (origin !== expected.origin) throw refuse(`uri must be on ${expected.origin}`);
  if (message.chainId !== expected.chainId) throw refuse(`chain id must be ${expected.chainId}`);
  if (message.issuedAt > expected.now + CLOCK_SKEW_MS) throw refuse('issued in the future');
  if (message.expirationTime !== undefined && message.expirationTime <= expected.now) throw refuse('message expired');
  if (message.notBefore !== undefined && message.notBefore > expected.now + CLOCK_SKEW_MS) throw refuse('message not yet valid');
};

export const rolesOf = (wallet: string, adminWallets: readonly string[]): Role[] =>
  adminWallets.includes(wallet) ? ['merchant', 'admin'] : ['merchant'];

/** The record of a nonce that has been used (nonces are not stored before that). */
export const usedNonceClaimId = (nonce: string) => `siwe-nonce-used:${nonce}`;

/**
 * A SIWE nonce carries its own expiry and a MAC, so issuing one stores nothing: `<random 16><expiry,
 * base 36, 9 chars><MAC, 32 hex>`, all alphanumeric as EIP-4361 requires.
 */
const NONCE_RANDOM_CHARS = 16;
const NONCE_EXPIRY_CHARS = 9;
const NONCE_MAC_CHARS = 32;
export const NONCE_LENGTH = NONCE_RANDOM_CHARS + NONCE_EXPIRY_CHARS + NONCE_MAC_CHARS;

export const nonceBody = (random: string, expiresAt: number) =>
  `${random.slice(0, NONCE_RANDOM_CHARS).padEnd(NONCE_RANDOM_CHARS, '0')}${expiresAt.toString(36).padStart(NONCE_EXPIRY_CHARS, '0')}`;

export const composeNonce = (body: string, mac: string) => `${body}${mac.slice(0, NONCE_MAC_CHARS)}`;

/** The parts of a nonce of the right shape, for its MAC to be checked; undefined otherwise. */
export const parseNonce = (nonce: string): { body: string; mac: string; expiresAt: number } | undefined => {
  if (nonce.length !== NONCE_LENGTH || !/^[a-z0-9]+$/.test(nonce)) return undefined;
  const body = nonce.slice(0, NONCE_RANDOM_CHARS + NONCE_EXPIRY_CHARS);
  const expiresAt = parseInt(body.slice(NONCE_RANDOM_CHARS), 36);
  return Number.isSafeInteger(expiresAt) ? { body, mac: nonce.slice(body.length), expiresAt } : undefined;
};
