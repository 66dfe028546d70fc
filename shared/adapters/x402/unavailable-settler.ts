import { DependencyUnavailableError } from '../../ports/errors';
import type { PaymentSettler } from '../../ports/payment-settler';

/** Where nothing can settle x402 payments (no chain, no facilitator): every call is refused, saying what is missing. */
export const unavailableSettler = (reason: string): PaymentSettler => {
  const refuse = async (): Promise<never> => {
    throw new DependencyUnavailableError('x402', reason);
  };
  return { verify: refuse, settle: refuse };
};
