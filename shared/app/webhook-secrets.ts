/**
 * The merchant's webhook signing secret (shared/domain/webhook-secret.ts): made, rotated, and opened
 * for signing. The clear secret leaves this module only in the answer that made it, and to sign.
 */
import { WEBHOOK_SECRET_OVERLAP_MS, WEBHOOK_SECRET_PREFIX_LENGTH, signingSecretsAt, toWebhookSigningView, type SealedWebhookSecret, type WebhookSigning } from '../domain/webhook-secret';
import type { Merchant } from '../domain/merchant';
import type { AppDeps } from './deps';
import { updateMerchant } from './merchants';

type SecretDeps = Pick<AppDeps, 'secretBox' | 'ids'>;

/** 32 random bytes, base32, behind a prefix that says what it is (`whsec_`). */
const newSecret = (deps: SecretDeps, now: number): { secret: string; sealed: SealedWebhookSecret } => {
  const secret = `whsec_${deps.ids.random(32)}`;
  return { secret, sealed: { sealed: deps.secretBox.seal(secret), prefix: secret.slice(0, WEBHOOK_SECRET_PREFIX_LENGTH), createdAt: now } };
};

/**
 * The merchant with a new current secret; the one it replaces signs beside it for the overlap. A
 * secret still in an earlier overlap is dropped: two rotations in a row end the oldest at once.
 */
export const withNewWebhookSecret = (deps: SecretDeps, merchant: Merchant, now: number): { merchant: Merchant; secret: string } => {
  const { secret, sealed } = newSecret(deps, now);
  const current = merchant.webhookSigning?.current;
  const signing: WebhookSigning = { current: sealed, previous: current ? { ...current, until: now + WEBHOOK_SECRET_OVERLAP_MS } : null };
  return { merchant: { ...merchant, webhookSigning: signing }, secret };
};

/** The console's rotation: a new secret, shown once in this answer; the first one when there was none. */
export const rotateWebhookSecret = async (deps: Pick<AppDeps, 'merchants' | 'clock' | 'secretBox' | 'ids'>, wallet: string) => {
  const { secret, signing, now } = await updateMerchant(deps, wallet, (merchant, now) => {
    const next = withNewWebhookSecret(deps, merchant, now);
    return { merchant: next.merchant, result: { secret: next.secret, signing: next.merchant.webhookSigning!, now } };
  });
  return { ok: true as const, webhookSecret: secret, signingSecret: toWebhookSigningView(signing, now) };
};

/** The shop's secrets that sign now, opened (previous: during a rotation's overlap); undefined when it has none. */
export const openWebhookSecrets = (deps: Pick<AppDeps, 'secretBox'>, merchant: Pick<Merchant, 'webhookSigning'> | undefined, now: number) => {
  if (!merchant?.webhookSigning) return undefined;
  const { current, previous } = signingSecretsAt(merchant.webhookSigning, now);
  return {
    prefix: current.prefix,
    secret: deps.secretBox.open(current.sealed),
    ...(previous && { previousSecret: deps.secretBox.open(previous.sealed) }),
  };
};
