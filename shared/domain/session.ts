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

export const nonceClaimId = (nonce: string) => `siwe-nonce:${nonce}`;
