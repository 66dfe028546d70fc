import type { PaymentPayload, PaymentPayloadV1, PaymentRequiredV2, SettleResult, SignInWithXPayload } from '../domain/x402';

/** What an EIP-3009 authorization moves: `value` atomic units from `from` to `to`, once, by `nonce`. */
export interface AuthorizationTerms {
  from: string;
  to: string;
  value: string;
  nonce: string;
}

export type AuthorizationOutcome =
  | { state: 'unused' }
  /** Lower-case hash of the transaction whose transfer paid it, its block, and the transfer's log index. */
  | { state: 'paid'; transaction: string; blockNumber: number; logIndex: number }
  | { state: 'spent' };

/**
 * What the x402 gate takes from the protocol's own packages, so that its headers are exactly the
 * protocol's: the encodings and envelope schemas, the v1 network names, and the two chain reads a
 * challenge and a sign-in need. Async: the packages load on the first x402 call.
 */
export interface X402Protocol {
  /** The protocol's v1 name of a chain (`base` for 8453, `base-sepolia` for 84532), when v1 has one. */
  v1Network(chainId: number): Promise<string | undefined>;
  /** The `PAYMENT-REQUIRED` header value of a v2 challenge. */
  encodePaymentRequired(challenge: PaymentRequiredV2): Promise<string>;
  /** The `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE` header value of a settlement. */
  encodePaymentResponse(settlement: SettleResult): Promise<string>;
  /** A payment header's proof, checked against the protocol's envelope schemas; undefined when it is not one. */
  decodePayment(header: string): Promise<PaymentPayload | PaymentPayloadV1 | undefined>;
  /** The EIP-712 domain a token's EIP-3009 authorizations are signed in, read from its contract (once). */
  tokenDomain(token: string): Promise<{ name: string; version: string }>;
  /**
   * What became of an EIP-3009 authorization on the token: unused; paid, by the successful transaction
   * that used it and moved its value from its authorizer to its recipient (`hint`, a transaction
   * believed to be that one, is looked at first); or spent without that transfer (cancelled, or used
   * by another authorization with the same nonce). Throws DependencyUnavailableError when the chain
   * cannot be asked, or the nonce is used by a transaction not found among the recent blocks.
   */
  authorizationOutcome(token: string, authorization: AuthorizationTerms, hint?: string): Promise<AuthorizationOutcome>;
  /** A `SIGN-IN-WITH-X` header's proof, checked against the extension's schema; undefined when it is not one. */
  parseSignInWithX(header: string): Promise<SignInWithXPayload | undefined>;
  /**
   * Whether the proof's signature over its EIP-4361 message is its address's: EIP-191 for an account,
   * EIP-1271 (asked of the contract on the chain) for a contract wallet.
   */
  verifySignInWithX(proof: SignInWithXPayload): Promise<boolean>;
  /** The JSON Schema of a sign-in-with-x proof, which a challenge's extension carries. */
  signInWithXSchema(): Promise<Record<string, unknown>>;
}
