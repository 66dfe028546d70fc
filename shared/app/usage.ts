/**
 * Requests made with each API key, counted per billing period in the store: one counter document per
 * subscription and period (`usage:<subscription>:<period start>` in `claims`, kept a year after the
 * period ends). The per-minute quota stays with the rate limiter; this is what the billing balance
 * reports.
 *
 * Counting is batched so a request never waits for it and a burst costs one write: each instance adds
 * the requests it let through to a pending count per counter, and writes the sum (read, add, replace
 * under the ETag) `USAGE_FLUSH_DELAY_MS` after the first of them, one write per counter at a time.
 * Reading a key's usage first writes what this instance holds for it, so its own requests always show;
 * another instance's show within the delay. Counts pending when an instance stops, or whose write
 * fails for good, are lost: the figure is a floor, off by at most that.
 */
import { billingPeriod, usageCounterId, USAGE_RETENTION_MS } from '../domain/billing';
import type { Subscription } from '../domain/subscription';
import type { AppDeps } from './deps';
import { isEtagMismatchOrDuplicate, withEtagRetry } from './etag-retry';

type UsageDeps = Pick<AppDeps, 'claims' | 'clock'>;

/** How long counts gather in memory before they are written. */
export const USAGE_FLUSH_DELAY_MS = 1_000;

interface PendingCount {
  subscriptionId: string;
  count: number;
  expiresAt: number;
}

class UsageBuffer {
  readonly pending = new Map<string, PendingCount>();
  readonly writing = new Map<string, Promise<void>>();
  readonly scheduled = new Set<string>();
}

const buffers = new WeakMap<object, UsageBuffer>();
const bufferOf = (deps: UsageDeps): UsageBuffer => {
  let buffer = buffers.get(deps.claims);
  if (!buffer) buffers.set(deps.claims, (buffer = new UsageBuffer()));
  return buffer;
};

/** Adds `count` to the counter in the store, creating it on first use. */
const addToCounter = (deps: UsageDeps, id: string, pending: PendingCount): Promise<void> =>
  withEtagRetry(
    async ({ write }) => {
      const stored = await deps.claims.get(id, id);
      const next = {
        id,
        owner: pending.subscriptionId,
        createdAt: stored?.value.createdAt ?? deps.clock.now(),
        expiresAt: pending.expiresAt,
        count: (stored?.value.count ?? 0) + pending.count,
      };
      await write(() => (stored ? deps.claims.replace(id, next, stored.etag) : deps.claims.create(id, next)));
    },
    {
      retryOn: isEtagMismatchOrDuplicate,
      exhausted: () => {
        throw new Error(`usage counter ${id} kept changing`);
      },
    },
  );

/** Writes what is pending for one counter, after any write of it already under way; a failed write keeps its count pending. */
const flushCounter = async (deps: UsageDeps, id: string): Promise<void> => {
  const buffer = bufferOf(deps);
  for (;;) {
    const running = buffer.writing.get(id);
    if (!running) break;
    await running.catch(() => {});
  }
  const pending = buffer.pending.get(id);
  if (!pending) return;
  buffer.pending.delete(id);
  const writing = addToCounter(deps, id, pending).catch((error: unknown) => {
    const later = buffer.pending.get(id);
    buffer.pending.set(id, { ...pending, count: pending.count + (later?.count ?? 0) });
    throw error;
  });
  buffer.writing.set(id, writing);
  try {
    await writing;
  } finally {
    buffer.writing.delete(id);
  }
};

/** Counts one request made with a key (let through by its quota), in the period it was made in. */
export const countKeyUse = (deps: UsageDeps, subscription: Pick<Subscription, 'id' | 'createdAt'>, now: number): void => {
  const buffer = bufferOf(deps);
  const period = billingPeriod(subscription.createdAt, now);
  const id = usageCounterId(subscription.id, period);
  const pending = buffer.pending.get(id);
  buffer.pending.set(id, { subscriptionId: subscription.id, count: (pending?.count ?? 0) + 1, expiresAt: period.end + USAGE_RETENTION_MS });
  if (buffer.scheduled.has(id)) return;
  buffer.scheduled.add(id);
  const timer = setTimeout(() => {
    buffer.scheduled.delete(id);
    // A failed write keeps its count pending: the next request or read of this key writes it.
    flushCounter(deps, id).catch(() => {});
  }, USAGE_FLUSH_DELAY_MS);
  timer.unref?.();
};

/** Requests made with a key in the period holding `at`: this instance's pending count written first. */
export const usageInPeriod = async (deps: UsageDeps, subscription: Pick<Subscription, 'id' | 'createdAt'>, at: number) => {
  const period = billingPeriod(subscription.createdAt, at);
  const id = usageCounterId(subscription.id, period);
  await flushCounter(deps, id);
  const stored = await deps.claims.get(id, id);
  return { period, requests: stored?.value.count ?? 0 };
};
