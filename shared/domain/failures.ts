/**
 * The PORTAL_* failure registry: every failure code the service reports, with its category, the
 * reason a merchant reads and the action it should take. Webhooks and the status endpoint read it.
 */
export const failureCategories = ['card_decline', 'compliance', 'limits', 'blockchain', 'session', 'system'] as const;
export type FailureCategory = (typeof failureCategories)[number];

export interface FailureInfo {
  category: FailureCategory;
  reason: string;
  action: string;
}

const entries = {
  PORTAL_PAY_INSUFFICIENT_FUNDS: ['card_decline', 'Insufficient funds', 'Ask the buyer to use another card or pay with crypto.'],
  PORTAL_PAY_CARD_DECLINED: ['card_decline', 'Declined by the issuer', 'Ask the buyer to contact their bank or use another card.'],
  PORTAL_PAY_EXPIRED_CARD: ['card_decline', 'Card expired', 'Ask the buyer to use a valid card.'],
  PORTAL_PAY_INCORRECT_CVC: ['card_decline', 'Wrong security code', 'Ask the buyer to re-enter the card details.'],
  PORTAL_PAY_INCORRECT_NUMBER: ['card_decline', 'Invalid card number', 'Ask the buyer to re-enter the card details.'],
  PORTAL_PAY_DO_NOT_HONOR: ['card_decline', 'Generic bank decline', 'Ask the buyer to contact their bank or use another card.'],
  PORTAL_PAY_FRAUD_BLOCKED: ['card_decline', 'Blocked by risk screening', 'Do not retry; offer crypto payment instead.'],
  PORTAL_PAY_3DS_FAILED: ['card_decline', '3D Secure failed or cancelled', 'Ask the buyer to retry and complete the bank check.'],
  PORTAL_PAY_BANK_INSTITUTION_BLOCK: ['card_decline', 'The bank restricts digital asset purchases', 'Offer crypto payment or another bank card.'],
  PORTAL_PAY_TRANSACTION_BLOCKED: ['compliance', 'The provider blocked the transaction', 'Do not retry; the provider may not disclose why.'],
  PORTAL_KYC_REQUIRED: ['compliance', 'Identity (name, address) required', 'Ask the buyer to complete identity verification.'],
  PORTAL_KYC_STEP_UP_REQUIRED: ['compliance', 'Date of birth and tax id required', 'Ask the buyer to complete the additional verification.'],
  PORTAL_KYC_DOC_REQUIRED: ['compliance', 'Document verification required', 'Ask the buyer to upload an identity document.'],
  PORTAL_KYC_DOC_UNREADABLE: ['compliance', 'Document unreadable', 'Ask the buyer to upload a clearer document.'],
  PORTAL_KYC_DOB_MISMATCH: ['compliance', 'Date of birth mismatch', 'Ask the buyer to check their details.'],
  PORTAL_KYC_SANCTIONS_BLOCKED: ['compliance', 'Sanctions or AML match', 'Do not retry; the buyer cannot use this route.'],
  PORTAL_KYC_UNDERAGE: ['compliance', 'Below the minimum age of 18', 'Do not retry with this buyer.'],
  PORTAL_REGION_UNSUPPORTED: ['compliance', 'Unsupported jurisdiction', 'Offer crypto payment; card purchase is not available there.'],
  PORTAL_LIMIT_EXCEEDED: ['limits', 'Total exceeds the buyer’s tier limit', 'Ask the buyer to verify for a higher tier or split the payment.'],
  PORTAL_LIMIT_AMOUNT_ABOVE_MAX: ['limits', 'Above the single-transaction maximum', 'Lower the amount or offer crypto payment.'],
  PORTAL_LIMIT_AMOUNT_BELOW_MIN: ['limits', 'Below the minimum amount', 'Raise the amount or offer crypto payment.'],
  PORTAL_CHAIN_INSUFFICIENT_BALANCE: ['blockchain', 'The wallet lacks tokens or gas', 'Ask the buyer to fund the wallet and retry.'],
  PORTAL_CHAIN_USER_REJECTED: ['blockchain', 'The buyer rejected the signature', 'The buyer may retry when ready.'],
  PORTAL_CHAIN_SLIPPAGE_EXCEEDED: ['blockchain', 'The rate moved beyond the slippage tolerance', 'Ask the buyer to retry.'],
  PORTAL_CHAIN_TX_REVERTED: ['blockchain', 'The contract execution reverted', 'Ask the buyer to retry; contact support if it repeats.'],
  PORTAL_CHAIN_WALLET_MISMATCH: ['blockchain', 'The wallet ownership check failed', 'Ask the buyer to reconnect the paying wallet.'],
  PORTAL_SESSION_ABANDONED: ['session', 'The portal was closed before completion', 'Send the payment link again if the buyer still wants to pay.'],
  PORTAL_SESSION_EXPIRED: ['session', 'The session expired', 'Send the payment link again.'],
  PORTAL_SESSION_CANCELLED: ['session', 'The buyer cancelled', 'No action needed unless the buyer asks to pay.'],
  PORTAL_SYS_GENERIC_FAILURE: ['system', 'The payment failed for an unknown reason', 'Ask the buyer to retry; contact support with the provider reference if it repeats.'],
  PORTAL_SYS_NETWORK_TIMEOUT: ['system', 'A network timeout interrupted the payment', 'Ask the buyer to retry.'],
  PORTAL_SYS_PROVIDER_UNAVAILABLE: ['system', 'The payment provider is unavailable', 'Ask the buyer to retry later or pay with crypto.'],
} as const satisfies Record<string, readonly [FailureCategory, string, string]>;

export type FailureCode = keyof typeof entries;

/**
 * What the buyer's page says to do after a failure, by category (the registry's actions are
 * addressed to the merchant). The receipt stays payable after any of them but an expiry.
 */
export const buyerAdvice: Record<FailureCategory, string> = {
  card_decline: 'Try another card, or pay with crypto.',
  compliance: 'The card provider cannot complete this purchase for you. You can pay with crypto instead.',
  limits: 'This amount is outside what the card provider allows for you. You can pay with crypto instead.',
  blockchain: 'Nothing was taken. Try again, or choose another token.',
  session: 'You can start the payment again.',
  system: 'Try again in a moment, or pay another way.',
};
export const failureCodes = Object.keys(entries) as FailureCode[];

export const failureInfo = (code: FailureCode): FailureInfo => {
  const [category, reason, action] = entries[code];
  return { category, reason, action };
};

export const isFailureCode = (code: string): code is FailureCode => code in entries;

/** Session codes: the only failures a merchant backend may report itself. */
export const isSessionFailure = (code: FailureCode) => entries[code][0] === 'session';

/** A provider error we have no mapping for: the generic code, with the provider's own code kept. */
export const GENERIC_FAILURE: FailureCode = 'PORTAL_SYS_GENERIC_FAILURE';
