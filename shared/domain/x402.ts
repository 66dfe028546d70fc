/**
 * x402 as this service speaks it: the `exact` scheme on EVM (an EIP-3009 `transferWithAuthorization`
 * of USDC signed by the payer, submitted by the relayer), in the protocol's v1 envelope (`X-PAYMENT`)
 * and its v2 envelope (`PAYMENT-SIGNATURE`). The shapes are the protocol's, typed here without its
 * packages so that the domain, the ports and a browser page share them; the packages themselves
 * (encodings, envelope schemas, the facilitator) are reached through the ports.
 */
import { z } from 'zod';

/** The protocol's header names (HTTP header names are case-insensitive; these are its spellings). */
export const X402_HEADERS = {
  /** 402: the v2 challenge, base64 JSON (the v1 challenge is the body). */
  paymentRequired: 'PAYMENT-REQUIRED',
  /** A v1 payment proof, base64 JSON. */
  paymentV1: 'X-PAYMENT',
  /** A v2 payment proof, base64 JSON. */
  paymentV2: 'PAYMENT-SIGNATURE',
  /** The settlement of a paid answer, for a v1 payer. */
  responseV1: 'X-PAYMENT-RESPONSE',
  /** The settlement of a paid answer, for a v2 payer. */
  responseV2: 'PAYMENT-RESPONSE',
  /** A sign-in-with-x proof (CAIP-122 / EIP-4361), base64 JSON. */
  signInWithX: 'SIGN-IN-WITH-X',
} as const;

/** The v2 extension key under which a challenge offers sign-in-with-x. */
export const SIGN_IN_WITH_X = 'sign-in-with-x';

/** The CAIP-2 id of an EVM chain: how v2 names networks. */
export const caip2Network = (chainId: number) => `eip155:${chainId}`;

export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
}

/** What a payment must be (v2 `accepts[]` entry; the facilitator judges a payload against it). */
export interface PaymentRequirements {
  scheme: string;
  network: string;
  asset: string;
  /** Atomic units, decimal. */
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** For `exact` on EVM: the token's EIP-712 domain, `{ name, version }`. */
  extra: Record<string, unknown>;
}

/** The v1 form of the same (the v1 `accepts[]` entry). */
export interface PaymentRequirementsV1 {
  scheme: string;
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
}

export interface PaymentRequiredV1 {
  x402Version: 1;
  error: string;
  accepts: PaymentRequirementsV1[];
}

export interface PaymentRequiredV2 {
  x402Version: 2;
  error: string;
  resource: ResourceInfo;
  accepts: PaymentRequirements[];
  extensions?: Record<string, unknown>;
}

/** A v2 payment proof: the requirements it accepted and the scheme's payload. Also what the facilitator is given. */
export interface PaymentPayload {
  x402Version: number;
  resource?: ResourceInfo;
  accepted: PaymentRequirements;
  payload: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

/** A v1 payment proof: no requirements of its own, only the scheme and network it pays on. */
export interface PaymentPayloadV1 {
  x402Version: 1;
  scheme: string;
  network: string;
  payload: Record<string, unknown>;
}

/** The facilitator's verdict on a proof (the protocol's `VerifyResponse`). */
export interface VerifyResult {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

/** The facilitator's settlement (the protocol's `SettleResponse`); also the body of the payment-response header. */
export interface SettleResult {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction: string;
  network: string;
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address');
const uint256 = z.string().regex(/^(0|[1-9]\d{0,77})$/, 'must be a decimal integer');

/**
 * The `exact` scheme's EVM payload: the EIP-3009 authorization and its signature (65 bytes from an
 * EOA; longer from a contract wallet, EIP-1271 or EIP-6492). The envelope's schemas leave the scheme's
 * payload open; this is what the gate reads from it.
 */
export const ExactEvmPayload = z.object({
  signature: z.string().regex(/^0x([0-9a-fA-F]{2}){65,2048}$/, 'must be a hex signature'),
  authorization: z.object({
    from: address,
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes, hex'),
  }),
});
export type ExactEvmPayload = z.infer<typeof ExactEvmPayload>;

/**
 * Why a payment was refused: the `error` of the 402 that answers it, stable for clients to act on.
 * `payment_required`: no proof was sent.
 */
export const paymentRefusals = [
  'payment_required',
  'invalid_payment_header',
  'invalid_payment',
  'unsupported_scheme',
  'network_mismatch',
  'asset_mismatch',
  'resource_mismatch',
  'recipient_mismatch',
  'amount_mismatch',
  'expired_authorization',
  'authorization_not_yet_valid',
  'invalid_signature',
  'insufficient_funds',
  'nonce_used',
  'settlement_failed',
] as const;
export type PaymentRefusal = (typeof paymentRefusals)[number];

/**
 * The facilitator's reasons (the `exact` scheme's `invalid_exact_evm_*` and the Permit2 ones, as the
 * protocol's EVM package names them) in this service's words. A reason not listed is the fallback of
 * the step that met it.
 */
const protocolReasons: Record<string, PaymentRefusal> = {
  invalid_exact_evm_scheme: 'unsupported_scheme',
  invalid_exact_evm_network_mismatch: 'network_mismatch',
  invalid_exact_evm_recipient_mismatch: 'recipient_mismatch',
  invalid_exact_evm_signature: 'invalid_signature',
  // A token name or version other than the contract's: the signature is over another EIP-712 domain.
  invalid_exact_evm_token_name_mismatch: 'invalid_signature',
  invalid_exact_evm_token_version_mismatch: 'invalid_signature',
  invalid_exact_evm_payload_authorization_valid_before: 'expired_authorization',
  invalid_exact_evm_payload_authorization_valid_after: 'authorization_not_yet_valid',
  invalid_exact_evm_authorization_value: 'amount_mismatch',
  invalid_exact_evm_payload_authorization_value_mismatch: 'amount_mismatch',
  invalid_exact_evm_insufficient_balance: 'insufficient_funds',
  invalid_exact_evm_nonce_already_used: 'nonce_used',
  permit2_insufficient_balance: 'insufficient_funds',
  invalid_permit2_signature: 'invalid_signature',
};

export const refusalOf = (protocolReason: string | undefined, fallback: PaymentRefusal): PaymentRefusal =>
  (protocolReason !== undefined && protocolReasons[protocolReason]) || fallback;

/**
 * An authorization must stay valid this long after it is checked, so that it cannot expire between
 * the check and its transaction being mined (the protocol's facilitator asks for 6 seconds).
 */
export const SETTLEMENT_MARGIN_SECONDS = 6;

export interface AuthorizationTerms {
  /** Lower-case address the payment must go to. */
  payTo: string;
  /** Atomic units, exactly. */
  amount: bigint;
  /** Unix seconds, by the service's clock. */
  nowSeconds: number;
}

/** The checks of an authorization against what is asked that need no chain: recipient, amount, validity window. */
export const checkAuthorization = (authorization: ExactEvmPayload['authorization'], terms: AuthorizationTerms): PaymentRefusal | undefined => {
  if (authorization.to.toLowerCase() !== terms.payTo) return 'recipient_mismatch';
  if (BigInt(authorization.value) !== terms.amount) return 'amount_mismatch';
  if (BigInt(authorization.validBefore) < BigInt(terms.nowSeconds + SETTLEMENT_MARGIN_SECONDS)) return 'expired_authorization';
  if (BigInt(authorization.validAfter) > BigInt(terms.nowSeconds)) return 'authorization_not_yet_valid';
  return undefined;
};

/**
 * The record of one authorization (token contracts use each payer's nonce once): the key of a
 * proof, claimed create-only so that one request settles it.
 */
export const paymentProofClaimId = (chainId: number, asset: string, from: string, nonce: string) =>
  `x402-nonce:${chainId}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`;

/** A sign-in-with-x proof (the extension's payload: the EIP-4361 fields, the signature, its chain as CAIP-2). */
export interface SignInWithXPayload {
  domain: string;
  address: string;
  statement?: string;
  uri: string;
  version: string;
  chainId: string;
  type: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  notBefore?: string;
  requestId?: string;
  resources?: string[];
  signature: string;
}

/** What a challenge's `sign-in-with-x` extension tells the wallet to sign (the extension's `info`). */
export interface SignInWithXInfo {
  domain: string;
  uri: string;
  statement: string;
  version: '1';
  nonce: string;
  issuedAt: string;
  expirationTime: string;
}
