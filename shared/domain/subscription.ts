import { z } from 'zod';
import { walletAddress } from './wallet';

/** The scopes of the interface document; a subscription carries a subset. */
export const scopes = [
  'inventory:read',
  'inventory:write',
  'orders:create',
  'receipts:read',
  'receipts:write',
  'shop:read',
  'split:read',
] as const;
export const Scope = z.enum(scopes);
export type Scope = z.infer<typeof Scope>;

/** Plans name a request quota (configuration); `development` is the local demo plan. */
export const plans = ['starter', 'pro', 'enterprise', 'development'] as const;
export const Plan = z.enum(plans);
export type Plan = z.infer<typeof Plan>;

export const Subscription = z.object({
  id: z.string().min(1),
  wallet: walletAddress,
  scopes: z.array(Scope),
  plan: Plan,
  brand: z.string().min(1),
  status: z.enum(['active', 'revoked']),
  /** First characters of the clear key, so a merchant can tell keys apart without the secret. */
  keyPrefix: z.string(),
  createdAt: z.number().int(),
  revokedAt: z.number().int().nullable(),
  /** The API key, encrypted at rest (AES-256-GCM): it signs the webhooks of receipts made with it. */
  signingKey: z.string().optional(),
  /** Approximate (to a few minutes): when a request last came with this key. */
  lastUsedAt: z.number().int().nullable().optional(),
});
export type Subscription = z.infer<typeof Subscription>;

export const API_KEY_PREFIX_LENGTH = 8;

/** What a merchant sees of a key: never the key itself. */
export const toKeyView = (subscription: Subscription) => ({
  id: subscription.id,
  prefix: subscription.keyPrefix,
  scopes: subscription.scopes,
  plan: subscription.plan,
  status: subscription.status,
  createdAt: subscription.createdAt,
  lastUsedAt: subscription.lastUsedAt ?? null,
  revokedAt: subscription.revokedAt,
});

export const hasScope = (subscription: Subscription, scope: Scope): boolean => subscription.scopes.includes(scope);

/** Parses a comma-separated scope list; `all` stands for every scope. */
export const parseScopeList = (text: string): Scope[] => {
  const names = text.split(',').map((name) => name.trim()).filter(Boolean);
  if (names.length === 1 && names[0] === 'all') return [...scopes];
  const unknown = names.filter((name) => !(scopes as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`scopes: unknown ${unknown.join(', ') || '(none given)'}; choose from ${scopes.join(', ')} or all`);
  }
  return [...new Set(names)] as Scope[];
};
