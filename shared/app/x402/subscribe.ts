/**
 * `POST /api/x402/subscribe`: an agent buys itself an API key. `starter` is free and needs only a
 * proof of the wallet (sign-in-with-x), one per wallet; `pro` and `enterprise` are paid in USDC to
 * the platform's recipient and set the wallet's plan for 30 days (paying again extends it), so the
 * keys the wallet makes later come on that plan too. The key is in this answer and nowhere else: the
 * answer kept for the proof's replays (anyone who sends the proof again, which a remote facilitator
 * sees) is the subscription without it.
 */
import { DomainError, describeZodError } from '../../domain/errors';
import { currentPlanOf, newMerchant, type Merchant } from '../../domain/merchant';
import { scopes } from '../../domain/subscription';
import {
  SUBSCRIPTION_TERM_MS,
  X402_SUBSCRIPTION_BOUNDS,
  X402SubscribeRequest,
  starterClaimId,
  subscriptionPrices,
  usdcOfCents,
  type SubscriptionPlan,
} from '../../domain/x402-requests';
import { ZERO_ADDRESS } from '../../domain/payment';
import { createMerchantKey } from '../api-keys';
import type { AppDeps } from '../deps';
import { takeClaim } from '../claims';
import { withEtagRetry, isEtagMismatchOrDuplicate } from '../etag-retry';
import { rememberAnswer, replayable, requirePayment } from './gate';
import { verifySignInWithX } from './siwx';

/** Headers with nothing in them: a challenge is asked for without reading any proof. */
const NO_HEADERS = { get: () => null };

const parse = (body: unknown) => {
  const parsed = X402SubscribeRequest.safeParse(body);
  if (!parsed.success) {
    const { field, message } = describeZodError(parsed.error);
    throw new DomainError('invalid_input', message, { field });
  }
  return parsed.data;
};

const rank = { pro: 1, enterprise: 2 } as const;

/**
 * Sets (or extends) the wallet's paid plan, once per payment (a claim on the proof): a renewal adds a
 * term to what is left of the same plan; a plan with no end (granted by a platform admin) at this
 * level or above is kept as it is. Answers when the plan now ends (null: never).
 */
export const extendPlan = async (deps: Pick<AppDeps, 'merchants' | 'claims' | 'clock'>, wallet: string, plan: Exclude<SubscriptionPlan, 'starter'>, proofKey: string) => {
  const once = `x402-plan:${proofKey}`;
  if (!(await takeClaim(deps.claims, { id: once, owner: wallet, createdAt: deps.clock.now() })).taken) {
    // This payment extended the plan already (a run cut short and let through again): no second term.
    return (await deps.merchants.get(wallet, wallet))?.value.plan?.expiresAt ?? null;
  }
  return withEtagRetry<number | null>(
    async ({ write }) => {
      const now = deps.clock.now();
      const stored = await deps.merchants.get(wallet, wallet);
      const merchant: Merchant = stored?.value ?? newMerchant(wallet, now);
      const current = merchant.plan;
      if (current && current.expiresAt === null && rank[current.name as keyof typeof rank] >= rank[plan]) return null;
      const running = current && current.name === plan && current.expiresAt !== null && current.expiresAt > now ? current.expiresAt : now;
      const expiresAt = running + SUBSCRIPTION_TERM_MS;
      const next: Merchant = { ...merchant, plan: { name: plan, expiresAt, source: 'x402' }, updatedAt: now };
      await write(() => (stored ? deps.merchants.replace(wallet, next, stored.etag) : deps.merchants.create(wallet, next)));
      return expiresAt;
    },
    {
      retryOn: isEtagMismatchOrDuplicate,
      exhausted: () => {
        throw new DomainError('conflict', 'the wallet kept changing; try again');
      },
    },
  );
};

const result = (plan: SubscriptionPlan, key: { key: { id: string }; apiKey: string }, expiresAt: number | null, message: string) => ({
  ok: true,
  plan,
  priceUsd: subscriptionPrices[plan],
  subscriptionId: key.key.id,
  apiKey: key.apiKey,
  message,
  expiresAt,
});

/** What the same proof gets again: the subscription without its key, which was shown once. */
const replayOf = ({ apiKey: _shownOnce, ...subscription }: Omit<ReturnType<typeof result>, 'apiKey'> & { apiKey?: string }) => ({
  ...subscription,
  message: `This payment's key was shown once, in the first answer, and is not shown again. ${subscription.expiresAt === null ? `The wallet's ${subscription.plan} plan does not end` : `The ${subscription.plan} plan runs until ${new Date(subscription.expiresAt).toISOString()}`}.`,
});

export const x402Subscribe = async (deps: AppDeps, headers: { get(name: string): string | null }, body: unknown) => {
  const { planKey } = parse(body);
  const resource = `${deps.settings.baseUrl}/api/x402/subscribe`;

  if (planKey === 'starter') {
    const proof = await verifySignInWithX(deps, headers, { resource });
    if (!proof) {
      // Free, but the wallet must prove itself: the 402 offers sign-in-with-x (its nonce, domain and
      // statement in the challenge's extensions) and asks for no payment; a payment proof is not read.
      const offer = await requirePayment(deps, NO_HEADERS, { resource, description: 'The starter plan: free, one per wallet, with a sign-in-with-x proof', payTo: (deps.settings.platformWallet ?? ZERO_ADDRESS).toLowerCase(), amount: 0n, extensions: { signInWithX: true } });
      if (offer.kind === 'challenge') return { status: offer.reply.status, body: offer.reply.body, headers: offer.reply.headers };
      throw new DomainError('unauthorized', 'the starter plan needs a sign-in-with-x proof of the wallet (header SIGN-IN-WITH-X)');
    }
    const wallet = proof.wallet.toLowerCase();
    const merchant = (await deps.merchants.get(wallet, wallet))?.value;
    if (merchant && currentPlanOf(merchant, deps.clock.now()) !== 'starter') {
      throw new DomainError('conflict', `this wallet is on the ${currentPlanOf(merchant, deps.clock.now())} plan already`, { field: 'planKey' });
    }
    const claimId = starterClaimId(wallet);
    if (!(await takeClaim(deps.claims, { id: claimId, owner: wallet, createdAt: deps.clock.now() })).taken) {
      throw new DomainError('conflict', 'this wallet already has its starter key', { field: 'planKey' });
    }
    // The wallet's one starter key is used only when a key is issued.
    const key = await createMerchantKey(deps, wallet, { scopes: [...scopes] }).catch(async (error: unknown) => {
      await deps.claims.delete(claimId, claimId).catch(() => false);
      throw error;
    });
    return { status: 200, body: result('starter', key, null, 'Starter key issued: keep it, it is shown once. It is also the webhook signing secret.'), headers: {} };
  }

  const payTo = deps.settings.platformWallet;
  if (!payTo) throw new DomainError('platform_recipient_not_configured', 'the platform recipient is not set up on this deployment');
  const amount = usdcOfCents(subscriptionPrices[planKey] * 100);
  if (amount < X402_SUBSCRIPTION_BOUNDS.min || amount > X402_SUBSCRIPTION_BOUNDS.max) throw new Error(`the ${planKey} price is outside the subscription bounds`);
  const gate = await requirePayment(deps, headers, { resource, description: `The ${planKey} plan for 30 days`, payTo: payTo.toLowerCase(), amount });
  if (gate.kind === 'replay') return replayable(gate.reply);
  if (gate.kind !== 'paid') return { status: gate.reply.status, body: gate.reply.body, headers: gate.reply.headers };

  const wallet = gate.payer.toLowerCase();
  const expiresAt = await extendPlan(deps, wallet, planKey, gate.proofKey);
  const key = await issuePlanKey(deps, wallet, gate.proofKey);
  const answer =
    'apiKey' in key
      ? result(planKey, key, expiresAt, `${expiresAt === null ? `The wallet's ${planKey} plan does not end` : `The ${planKey} plan runs until ${new Date(expiresAt).toISOString()}; pay again to extend it`}. Keep the key: it is shown once.`)
      : replayOf(result(planKey, { key: { id: key.subscriptionId }, apiKey: '' }, expiresAt, ''));
  await rememberAnswer(deps, gate.proofKey, { status: 200, body: replayOf(answer), headers: gate.responseHeaders });
  return { status: 200, body: answer, headers: gate.responseHeaders };
};

/**
 * The one key a payment buys: the run of the proof that takes its claim issues it, and names it on
 * the claim. A run let through again after one that stopped before its answer was stored (the proof
 * is no secret: a remote facilitator sees it) gets the key's id and no key; the wallet makes more
 * keys in the console. A key that could not be made gives the claim back.
 */
export const issuePlanKey = async (deps: AppDeps, wallet: string, proofKey: string): Promise<{ key: { id: string }; apiKey: string } | { subscriptionId: string }> => {
  const id = `x402-key:${proofKey}`;
  const claim = { id, owner: '', createdAt: deps.clock.now() };
  const claimed = await takeClaim(deps.claims, claim);
  if (!claimed.taken) return { subscriptionId: claimed.held?.value.owner ?? '' };
  const key = await createMerchantKey(deps, wallet, { scopes: [...scopes] }).catch(async (error: unknown) => {
    await deps.claims.delete(id, id).catch(() => false);
    throw error;
  });
  await deps.claims.replace(id, { ...claim, owner: key.key.id }, claimed.etag).catch(() => undefined);
  return key;
};
