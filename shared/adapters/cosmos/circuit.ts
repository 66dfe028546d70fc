/**
 * A circuit breaker for the document store: after `threshold` failures in a row it stops calling
 * the store for `openMs` (calls fail at once), then lets one call through to test it.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private probing = false;

  constructor(
    private readonly threshold = 3,
    private readonly openMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** False while open (and while the one test call of a half-open circuit is out). */
  allow(): boolean {
    if (this.failures < this.threshold) return true;
    if (this.now() < this.openUntil || this.probing) return false;
    this.probing = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.probing = false;
  }

  failure(): void {
    this.failures++;
    this.probing = false;
    if (this.failures >= this.threshold) this.openUntil = this.now() + this.openMs;
  }

  get open(): boolean {
    return this.failures >= this.threshold && this.now() < this.openUntil;
  }
}

/** What the plugin throws instead of calling a store the circuit has given up on. */
export class CircuitOpenError extends Error {
  readonly code = 'ECIRCUITOPEN';
  constructor() {
    super('the document store is failing; not called for a few seconds');
    this.name = 'CircuitOpenError';
  }
}
