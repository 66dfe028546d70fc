import type { SessionClaims, SignInMessage } from '../domain/session';

/** Signs and checks the session cookie's token. */
export interface SessionTokens {
  issue(claims: SessionClaims): string;
  /** The claims of a valid, unexpired token signed by this service; undefined for anything else. */
  verify(token: string): SessionClaims | undefined;
  /** A keyed MAC (hex) with this service's session secret: lets the service recognise values it issued without storing them. */
  mac(text: string): string;
}

/** Parses an EIP-4361 message and checks its signature; throws on a bad message or signature. */
export interface SignInVerifier {
  verify(message: string, signature: string, now: number): Promise<SignInMessage>;
}
