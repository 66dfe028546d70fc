import type { Plan } from '../domain/subscription';

/**
 * Where API keys come from. Locally the service makes them itself; in Azure, API Management does
 * (one APIM subscription per key, in the product of the plan), and the backend keeps the record.
 */
export interface KeyIssuer {
  /** Creates the gateway subscription `subscriptionId` and answers its key (shown to the merchant once). */
  issue(input: { subscriptionId: string; plan: Plan; wallet: string; displayName: string }): Promise<{ apiKey: string }>;
  /** Deletes (or cancels) the gateway subscription; a no-op when it does not exist. */
  revoke(subscriptionId: string): Promise<void>;
}
