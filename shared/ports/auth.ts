import type { SessionClaims, SignInMessage } from '../domain/session';

/** Signs and checks the session cookie's token. */
export interface SessionTokens {
  issue(claims: SessionClaims): string;
  /** The claims of a valid, unexpired token signed by this service; undefined for anything else. */
  verify(token: string): SessionClaims | undefined;
}

/** Parses an EIP-4361 message and checks its signature; throws on a bad message or signature. */
export interface SignInVerifier {
  verify(message: string, signature: string, now: number): Promise<SignInMessage>;
}
