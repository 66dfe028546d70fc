import type { PaymentPayload, PaymentRequirements, SettleResult, VerifyResult } from '../domain/x402';

export type { PaymentPayload, PaymentRequirements, SettleResult, VerifyResult };

/**
 * An x402 facilitator: judges a payment proof against the requirements it answers, and settles it
 * on chain. The proof is always in the v2 form (the gate turns a v1 proof into it), so every
 * facilitator, in process or remote, is asked the same way. A refusal is a result (`isValid: false`,
 * `success: false`, with the protocol's reason); a throw means the facilitator could not be asked,
 * or did not say how a settlement ended.
 */
export interface PaymentSettler {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult>;
  /** Submits the payment (EIP-3009 `transferWithAuthorization` for `exact` on EVM) and resolves once it is mined, or refused. */
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResult>;
}
