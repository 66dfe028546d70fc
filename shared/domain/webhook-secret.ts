/**
 * A merchant's webhook signing secret: what signs the webhooks of receipts no API key created (the
 * console's terminal, an agent's order), so that no key handed to a vendor can forge them. Shown
 * once, kept sealed on the merchant's document; a rotation keeps the secret it replaces signing
 * beside the new one for `WEBHOOK_SECRET_OVERLAP_MS`, so a receiver can switch without losing events.
 */

/** How long a rotated-out secret still signs beside the new one. */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** The secret's visible start (`whsec_` and four characters): how the console names it. */
export const WEBHOOK_SECRET_PREFIX_LENGTH = 10;

/** A secret as stored: sealed (AES-256-GCM by the `SecretBox`), with its prefix in clear. */
export interface SealedWebhookSecret {
  sealed: string;
  prefix: string;
  createdAt: number;
}

export interface WebhookSigning {
  current: SealedWebhookSecret;
  /** The secret rotated out, still signing beside `current` until `until` (Unix ms). */
  previous: (SealedWebhookSecret & { until: number }) | null;
}

/** The secrets that sign at `now`: the current one, and the previous one while its overlap runs. */
export const signingSecretsAt = (signing: WebhookSigning, now: number): { current: SealedWebhookSecret; previous: SealedWebhookSecret | null } => ({
  current: signing.current,
  previous: signing.previous && signing.previous.until > now ? signing.previous : null,
});

/** What a merchant sees of its secrets at `now`: prefixes and times, never a secret. */
export const toWebhookSigningView = (signing: WebhookSigning, now: number) => {
  const { previous } = signingSecretsAt(signing, now);
  return {
    prefix: signing.current.prefix,
    createdAt: signing.current.createdAt,
    previous: previous && signing.previous ? { prefix: previous.prefix, until: signing.previous.until } : null,
  };
};
export type WebhookSigningView = ReturnType<typeof toWebhookSigningView>;
