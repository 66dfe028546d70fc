import type { Plan } from '../../domain/subscription';

/**
 * The API Management product that holds the keys of each plan; `development` is the local stack's
 * plan and has no product. The one list of these ids: the key issuer puts a key in the product of its
 * plan, and infra/modules/apim.bicep creates the products under the same ids (test/infra checks the
 * two are equal). Prefixed so they stay clear of the products a new API Management instance may come
 * with (`starter`, `unlimited`): taking one of those over would inherit its APIs and settings.
 */
export const apimProductOfPlan = {
  starter: 'plan-starter',
  pro: 'plan-pro',
  enterprise: 'plan-enterprise',
} as const satisfies Record<Exclude<Plan, 'development'>, string>;
