import { DomainError } from '../domain/errors';
import { ID_PATTERN } from '../domain/query-params';
import { API_KEY_PREFIX_LENGTH, toKeyView, type Plan, type Scope, type Subscription } from '../domain/subscription';
import { currentPlanOf } from '../domain/merchant';
import type { Receipt } from '../domain/receipt';
import { isFinalReceipt } from '../domain/receipt-status';
import type { AppDeps } from './deps';
import { withEtagRetry } from './etag-retry';
import { hashApiKey } from './hashing';
import { loadMerchant } from './merchants';
import { takeClaim } from './claims';

export interface CreateApiKeyInput {
  /** The subscription id, when the caller has reserved one; random otherwise. */
  id?: string;
  wallet: string;
  scopes: Scope[];
  plan: Plan;
  brand: string;
}

const newSubscriptionId = (ids: AppDeps['ids']) => `sub_${ids.random(10)}`;

/** Active keys a wallet may hold at once (each is a gateway subscription). */
export const MAX_ACTIVE_KEYS = 10;
const keySlotId = (wallet: string, slot: number) => `key-slot:${wallet}:${slot}`;

/**
 * Creates a subscription and its key: the gateway issues the key (API Management in Azure), the
 * record keeps wallet, scopes and plan. The clear key is in this result and nowhere else, ever.
 */
export const createApiKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'secretBox' | 'clock' | 'ids'>,
  input: CreateApiKeyInput,
): Promise<{ subscription: Subscription; apiKey: string }> => {
  const id = input.id ?? newSubscriptionId(deps.ids);
  const { apiKey } = await deps.keyIssuer.issue({ subscriptionId: id, plan: input.plan, wallet: input.wallet, displayName: `${input.wallet} ${input.plan}` });
  const subscription: Subscription = {
    id,
    wallet: input.wallet,
    scopes: input.scopes,
    plan: input.plan,
    brand: input.brand,
    status: 'active',
    keyPrefix: apiKey.slice(0, API_KEY_PREFIX_LENGTH),
    createdAt: deps.clock.now(),
    revokedAt: null,
    signingKey: deps.secretBox.seal(apiKey),
  };
  try {
    await deps.subscriptions.create(subscription, hashApiKey(apiKey));
  } catch (error) {
    // A key nobody holds a record for must not stay live at the gateway.
    await deps.keyIssuer.revoke(id).catch(() => {});
    throw error;
  }
  return { subscription, apiKey };
};

export const listApiKeys = (deps: Pick<AppDeps, 'subscriptions'>, filter: { wallet?: string } = {}) =>
  deps.subscriptions.list(filter);

export const revokeApiKey = async (
  deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'clock'>,
  id: string,
  owner?: string,
): Promise<Subscription> => {
  const subscription = ID_PATTERN.test(id) ? await deps.subscriptions.get(id) : undefined;
  if (!subscription || (owner !== undefined && subscription.wallet !== owner)) {
    throw new DomainError('not_found', `subscription ${id} not found`);
  }
  if (subscription.status === 'revoked') return subscription;
  const revoked: Subscription = { ...subscription, status: 'revoked', revokedAt: deps.clock.now() };
  await deps.subscriptions.update(revoked);
  await deps.keyIssuer.revoke(id);
  return revoked;
};

/** The active subscription a clear key belongs to, or undefined. */
export const findSubscriptionByKey = async (
  deps: Pick<AppDeps, 'subscriptions'>,
  apiKey: string,
): Promise<Subscription | undefined> => {
  const id = await deps.subscriptions.findIdByKeyHash(hashApiKey(apiKey));
  const subscription = id ? await deps.subscriptions.get(id) : undefined;
  return subscription?.status === 'active' ? subscription : undefined;
};

type MerchantKeyDeps = Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'secretBox' | 'clock' | 'ids' | 'settings' | 'merchants' | 'claims'>;

/**
 * Plans are paid for, not chosen: a key comes on the wallet's current plan. Naming another plan is
 * refused (403), except `development` on a development stack (the local demo plan).
 */
const planForNewKey = async (deps: MerchantKeyDeps, wallet: string, requested: Plan | undefined): Promise<Plan> => {
  const current = currentPlanOf(await loadMerchant(deps, wallet), deps.clock.now());
  if (requested === undefined || requested === current) return current;
  if (requested === 'development') {
    if (deps.settings.development) return requested;
    throw new DomainError('invalid_input', 'plan: the development plan exists only on a development stack', { field: 'plan' });
  }
  throw new DomainError('forbidden', `this wallet is on the ${current} plan; the ${requested} plan is bought with POST /api/x402/subscribe`, { field: 'plan', currentPlan: current });
};

/**
 * Holds one of the wallet's key slots for a new subscription: a create-only claim per slot, so
 * concurrent requests cannot together pass the limit. Keys made before slots existed count too.
 */
const claimKeySlot = async (deps: MerchantKeyDeps, wallet: string, subscriptionId: string): Promise<string> => {
  const active = (await deps.subscriptions.list({ wallet })).filter((subscription) => subscription.status === 'active');
  const slotted = new Set<string>();
  const slots: string[] = [];
  for (let slot = 0; slot < MAX_ACTIVE_KEYS; slot++) slots.push(keySlotId(wallet, slot));
  const full = () => new DomainError('conflict', `a wallet holds at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`, { field: 'keys', limit: MAX_ACTIVE_KEYS });
  for (const id of slots) {
    const holder = await deps.claims.get(id, id);
    if (holder) {
      slotted.add(holder.value.owner);
      continue;
    }
    const unslotted = active.filter((subscription) => !slotted.has(subscription.id)).length;
    if (slotted.size + unslotted >= MAX_ACTIVE_KEYS) throw full();
    if ((await takeClaim(deps.claims, { id, owner: subscriptionId, createdAt: deps.clock.now() })).taken) return id;
  }
  throw full();
};

/** Frees the key slot a subscription held, if it held one. */
const releaseKeySlot = async (deps: Pick<AppDeps, 'claims'>, wallet: string, subscriptionId: string) => {
  for (let slot = 0; slot < MAX_ACTIVE_KEYS; slot++) {
    const id = keySlotId(wallet, slot);
    const holder = await deps.claims.get(id, id);
    if (holder?.value.owner === subscriptionId) {
      await deps.claims.delete(id, id, holder.etag);
      return;
    }
  }
};

/** A signed-in merchant's new key, on the wallet's plan, within its key limit. */
export const createMerchantKey = async (deps: MerchantKeyDeps, wallet: string, input: { scopes: Scope[]; plan?: Plan }) => {
  const plan = await planForNewKey(deps, wallet, input.plan);
  const id = newSubscriptionId(deps.ids);
  const slot = await claimKeySlot(deps, wallet, id);
  try {
    const { subscription, apiKey } = await createApiKey(deps, { id, wallet, scopes: input.scopes, plan, brand: deps.settings.brandKey });
    return { ok: true as const, apiKey, key: toKeyView(subscription) };
  } catch (error) {
    await deps.claims.delete(slot, slot).catch(() => {});
    throw error;
  }
};

export const listMerchantKeys = async (deps: Pick<AppDeps, 'subscriptions'>, wallet: string) => ({
  keys: (await deps.subscriptions.list({ wallet })).map(toKeyView),
});

export const revokeMerchantKey = async (deps: Pick<AppDeps, 'subscriptions' | 'keyIssuer' | 'clock' | 'claims'>, wallet: string, id: string) => {
  await revokeApiKey(deps, id, wallet);
  await releaseKeySlot(deps, wallet, id);
  return { ok: true as const, id };
};

/** Receipts read per page while rolling, and pages per call: one call does a bounded amount of work; `nextCursor` goes on. */
export const ROLL_PAGE_SIZE = 100;
export const ROLL_PAGES_PER_CALL = 5;

type RollDeps = Pick<AppDeps, 'subscriptions' | 'receipts'>;

const ownKey = async (deps: Pick<AppDeps, 'subscriptions'>, wallet: string, id: string) => {
  const subscription = ID_PATTERN.test(id) ? await deps.subscriptions.get(id) : undefined;
  return subscription?.wallet === wallet ? subscription : undefined;
};

/**
 * Moves one receipt's signing from `fromId` to `toId`, with the events it has not queued yet; false
 * when it no longer needs it (already moved, refunded in full, gone). `updatedAt` stays: the receipt
 * itself did not change, so a status report accepted earlier (an outbox entry) still applies.
 */
const resignReceipt = (deps: Pick<AppDeps, 'receipts'>, wallet: string, receiptId: string, fromId: string, toId: string) =>
  withEtagRetry(
    async ({ write }) => {
      const stored = await deps.receipts.get(wallet, receiptId);
      if (!stored || stored.value.createdBy !== fromId || isFinalReceipt(stored.value)) return false;
      const next: Receipt = {
        ...stored.value,
        createdBy: toId,
        pendingEvents: stored.value.pendingEvents.map((event) => (event.signingSubscriptionId === fromId ? { ...event, signingSubscriptionId: toId } : event)),
      };
      await write(() => deps.receipts.replace(wallet, next, stored.etag));
      return true;
    },
    {
      exhausted: () => {
        throw new DomainError('conflict', `receipt ${receiptId} kept changing; roll again (receipts already moved stay moved)`);
      },
    },
  );

/**
 * Rolls a revoked key: its receipts that can still change (every one but those refunded in full) are
 * signed from now on by another active key of the same wallet, the merchant's choice. An active key
 * is refused (409 `key_active`): the backend holding it still makes receipts it signs, so revoke it
 * first. Idempotent: a receipt already moved is left alone, so a repeated call moves 0. Bounded:
 * ROLL_PAGES_PER_CALL pages of ROLL_PAGE_SIZE a call; `nextCursor` (null when done) continues.
 */
export const rollMerchantKey = async (deps: RollDeps, wallet: string, id: string, input: { toKeyId: string; cursor?: string }) => {
  const from = await ownKey(deps, wallet, id);
  if (!from) throw new DomainError('not_found', `subscription ${id} not found`);
  if (from.status === 'active') {
    throw new DomainError('key_active', `key ${id} is active and still signs what it creates: revoke it first, then roll it`, { field: 'id' });
  }
  if (input.toKeyId === id) throw new DomainError('invalid_input', 'toKeyId: must be another key than the one rolled', { field: 'toKeyId' });
  const to = await ownKey(deps, wallet, input.toKeyId);
  if (!to) throw new DomainError('target_key_not_found', `toKeyId: no key ${input.toKeyId} of this wallet`, { field: 'toKeyId' });
  if (to.status !== 'active') throw new DomainError('target_key_revoked', `toKeyId: key ${to.id} is revoked; choose an active key`, { field: 'toKeyId' });
  if (!to.signingKey) throw new DomainError('invalid_input', 'toKeyId: this key has no signing key; create a new key', { field: 'toKeyId' });

  let moved = 0;
  let cursor = input.cursor;
  for (let pages = 0; pages < ROLL_PAGES_PER_CALL; pages++) {
    const page = await deps.receipts.listByWallet(wallet, { limit: ROLL_PAGE_SIZE, cursor, createdBy: from.id });
    for (const receipt of page.receipts) {
      if (!isFinalReceipt(receipt) && (await resignReceipt(deps, wallet, receipt.receiptId, from.id, to.id))) moved++;
    }
    cursor = page.nextCursor ?? undefined;
    if (!cursor) break;
  }
  return { ok: true as const, id: from.id, toKeyId: to.id, moved, nextCursor: cursor ?? null };
};
