import type { RateLimitDecision, RateLimiter } from '../../ports/runtime';

const WINDOW_MS = 60_000;

/** Fixed one-minute windows per key, in this process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  hit(key: string, limitPerMinute: number, now: number): RateLimitDecision {
    const start = now - (now % WINDOW_MS);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      if (this.windows.size > 10_000) this.evictBefore(start);
      this.windows.set(key, (window = { start, count: 0 }));
    }
    const allowed = window.count < limitPerMinute;
    if (allowed) window.count++;
    return { allowed, limit: limitPerMinute, remaining: limitPerMinute - window.count, resetAt: start + WINDOW_MS };
  }

  private evictBefore(start: number) {
    for (const [key, window] of this.windows) if (window.start < start) this.windows.delete(key);
  }
}
