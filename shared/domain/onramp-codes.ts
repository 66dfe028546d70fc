/**
 * Which `PORTAL_*` code a card on-ramp provider's own code means. One table per provider; a code no
 * table knows becomes `PORTAL_SYS_GENERIC_FAILURE`, and the provider's code is kept beside it
 * (`providerErrorCode`), never replaced by an invented one.
 */
import { GENERIC_FAILURE, type FailureCode } from './failures';

/**
 * Stripe: card decline codes (`decline_code` / `code` of a failed charge) and the crypto on-ramp's
 * rejection reasons.
 */
export const stripeCodes: Readonly<Record<string, FailureCode>> = {
  // Card declines.
  insufficient_funds: 'PORTAL_PAY_INSUFFICIENT_FUNDS',
  card_declined: 'PORTAL_PAY_CARD_DECLINED',
  generic_decline: 'PORTAL_PAY_CARD_DECLINED',
  call_issuer: 'PORTAL_PAY_CARD_DECLINED',
  card_not_supported: 'PORTAL_PAY_CARD_DECLINED',
  transaction_not_allowed: 'PORTAL_PAY_CARD_DECLINED',
  expired_card: 'PORTAL_PAY_EXPIRED_CARD',
  incorrect_cvc: 'PORTAL_PAY_INCORRECT_CVC',
  invalid_cvc: 'PORTAL_PAY_INCORRECT_CVC',
  incorrect_number: 'PORTAL_PAY_INCORRECT_NUMBER',
  invalid_number: 'PORTAL_PAY_INCORRECT_NUMBER',
  do_not_honor: 'PORTAL_PAY_DO_NOT_HONOR',
  do_not_try_again: 'PORTAL_PAY_DO_NOT_HONOR',
  fraudulent: 'PORTAL_PAY_FRAUD_BLOCKED',
  stolen_card: 'PORTAL_PAY_FRAUD_BLOCKED',
  lost_card: 'PORTAL_PAY_FRAUD_BLOCKED',
  pickup_card: 'PORTAL_PAY_FRAUD_BLOCKED',
  merchant_blacklist: 'PORTAL_PAY_FRAUD_BLOCKED',
  authentication_required: 'PORTAL_PAY_3DS_FAILED',
  authentication_failure: 'PORTAL_PAY_3DS_FAILED',
  restricted_card: 'PORTAL_PAY_BANK_INSTITUTION_BLOCK',
  security_violation: 'PORTAL_PAY_BANK_INSTITUTION_BLOCK',
  card_velocity_exceeded: 'PORTAL_LIMIT_EXCEEDED',
  withdrawal_count_limit_exceeded: 'PORTAL_LIMIT_EXCEEDED',
  invalid_amount: 'PORTAL_LIMIT_AMOUNT_ABOVE_MAX',
  processing_error: 'PORTAL_SYS_GENERIC_FAILURE',
  // On-ramp rejections.
  transaction_blocked: 'PORTAL_PAY_TRANSACTION_BLOCKED',
  kyc_required: 'PORTAL_KYC_REQUIRED',
  kyc_step_up_required: 'PORTAL_KYC_STEP_UP_REQUIRED',
  identity_document_required: 'PORTAL_KYC_DOC_REQUIRED',
  identity_document_unreadable: 'PORTAL_KYC_DOC_UNREADABLE',
  date_of_birth_mismatch: 'PORTAL_KYC_DOB_MISMATCH',
  sanctions_screening_failed: 'PORTAL_KYC_SANCTIONS_BLOCKED',
  underage: 'PORTAL_KYC_UNDERAGE',
  unsupported_region: 'PORTAL_REGION_UNSUPPORTED',
  amount_above_maximum: 'PORTAL_LIMIT_AMOUNT_ABOVE_MAX',
  amount_below_minimum: 'PORTAL_LIMIT_AMOUNT_BELOW_MIN',
  limit_exceeded: 'PORTAL_LIMIT_EXCEEDED',
  session_expired: 'PORTAL_SESSION_EXPIRED',
  session_cancelled: 'PORTAL_SESSION_CANCELLED',
  provider_unavailable: 'PORTAL_SYS_PROVIDER_UNAVAILABLE',
  // The on-ramp API's own error codes: a buyer whose address is in a region it cannot serve (answered
  // to the session's creation), and a blocked transaction as a session's `last_error` names it.
  crypto_onramp_unsupportable_customer: 'PORTAL_REGION_UNSUPPORTED',
  crypto_onramp_transaction_blocked: 'PORTAL_PAY_TRANSACTION_BLOCKED',
};

/**
 * The sandbox provider's outcomes, one per code a tester can pick on its page (`success` sends the
 * USDC; every other outcome is a rejection with that code). `mystery_error` stands for a code no
 * table knows.
 */
export const sandboxCodes: Readonly<Record<string, FailureCode>> = {
  card_declined: 'PORTAL_PAY_CARD_DECLINED',
  insufficient_funds: 'PORTAL_PAY_INSUFFICIENT_FUNDS',
  expired_card: 'PORTAL_PAY_EXPIRED_CARD',
  incorrect_cvc: 'PORTAL_PAY_INCORRECT_CVC',
  incorrect_number: 'PORTAL_PAY_INCORRECT_NUMBER',
  do_not_honor: 'PORTAL_PAY_DO_NOT_HONOR',
  fraud_blocked: 'PORTAL_PAY_FRAUD_BLOCKED',
  three_ds_failed: 'PORTAL_PAY_3DS_FAILED',
  bank_blocks_crypto: 'PORTAL_PAY_BANK_INSTITUTION_BLOCK',
  transaction_blocked: 'PORTAL_PAY_TRANSACTION_BLOCKED',
  kyc_required: 'PORTAL_KYC_REQUIRED',
  kyc_step_up: 'PORTAL_KYC_STEP_UP_REQUIRED',
  kyc_document_required: 'PORTAL_KYC_DOC_REQUIRED',
  kyc_document_unreadable: 'PORTAL_KYC_DOC_UNREADABLE',
  kyc_dob_mismatch: 'PORTAL_KYC_DOB_MISMATCH',
  sanctions_match: 'PORTAL_KYC_SANCTIONS_BLOCKED',
  underage: 'PORTAL_KYC_UNDERAGE',
  region_unsupported: 'PORTAL_REGION_UNSUPPORTED',
  tier_limit_exceeded: 'PORTAL_LIMIT_EXCEEDED',
  amount_above_max: 'PORTAL_LIMIT_AMOUNT_ABOVE_MAX',
  amount_below_min: 'PORTAL_LIMIT_AMOUNT_BELOW_MIN',
  buyer_cancelled: 'PORTAL_SESSION_CANCELLED',
  session_expired: 'PORTAL_SESSION_EXPIRED',
  network_timeout: 'PORTAL_SYS_NETWORK_TIMEOUT',
  provider_unavailable: 'PORTAL_SYS_PROVIDER_UNAVAILABLE',
};

/** The outcome a sandbox tester picks for an unmapped provider code. */
export const SANDBOX_UNKNOWN_CODE = 'mystery_error';

const tables = { stripe: stripeCodes, sandbox: sandboxCodes } as const;

/** The `PORTAL_*` code for a provider's code; unknown (or absent) → the generic code. */
export const portalCodeFor = (provider: keyof typeof tables, providerCode: string | null): FailureCode => {
  if (!providerCode) return GENERIC_FAILURE;
  return Object.hasOwn(tables[provider], providerCode) ? tables[provider][providerCode]! : GENERIC_FAILURE;
};
