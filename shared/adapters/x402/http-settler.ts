/**
 * A remote x402 facilitator (`X402_FACILITATOR_URL`), through the protocol's own HTTP client: its
 * `/verify` and `/settle`. The relayer pays nothing here; the facilitator submits the transfer.
 */
import { HTTPFacilitatorClient } from '@x402/core/http';
import type { PaymentSettler, SettleResult, VerifyResult } from '../../ports/payment-settler';

type ClientArguments = Parameters<HTTPFacilitatorClient['verify']>;

/** A facilitator answers a refusal with an error status too; the client then throws it (VerifyError, SettleError): still a refusal. */
const refusal = <T>(error: unknown, name: 'VerifyError' | 'SettleError'): T => {
  if (error instanceof Error && error.name === name) return error as unknown as T;
  throw error;
};

export const httpSettler = (url: string, timeoutMs = 90_000): PaymentSettler => {
  const client = new HTTPFacilitatorClient({ url, timeoutMs });
  return {
    verify: async (payload, requirements) => {
      try {
        return await client.verify(...([payload, requirements] as unknown as ClientArguments));
      } catch (error) {
        const { invalidReason, invalidMessage, payer } = refusal<VerifyResult>(error, 'VerifyError');
        return { isValid: false, invalidReason, invalidMessage, payer };
      }
    },
    settle: async (payload, requirements) => {
      try {
        return await client.settle(...([payload, requirements] as unknown as ClientArguments));
      } catch (error) {
        const { errorReason, errorMessage, payer, transaction, network } = refusal<SettleResult>(error, 'SettleError');
        return { success: false, errorReason, errorMessage, payer, transaction: transaction ?? '', network: network ?? payload.accepted.network };
      }
    },
  };
};
