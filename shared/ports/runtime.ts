export interface Clock {
  now(): number;
}

export interface Ids {
  /** A random identifier; `bytes` of entropy, base32 lower-case. */
  random(bytes?: number): string;
  /** An opaque secret for an API key. */
  apiKey(): string;
}

/** A dependency that the health probe asks. Resolves when reachable, rejects otherwise. */
export interface HealthProbe {
  ping(): Promise<void>;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix ms when the window resets. */
  resetAt: number;
}

export interface RateLimiter {
  hit(key: string, limitPerMinute: number, now: number): RateLimitDecision;
}
