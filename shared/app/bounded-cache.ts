/**
 * The one in-process cache: least recently used first out, bounded by entry count AND by an estimate
 * of the bytes it holds (keys included), so no caller — least of all one choosing the keys — can grow
 * the heap without bound. Entries remember when they were stored; callers decide how old is too old.
 */
export interface CacheLimits<V> {
  maxEntries: number;
  maxBytes: number;
  /** Bytes one value holds, roughly (its JSON length is a fair estimate). */
  sizeOf: (value: V) => number;
}

interface Entry<V> {
  value: V;
  at: number;
  bytes: number;
}

export class BoundedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private bytes = 0;

  constructor(private readonly limits: CacheLimits<V>) {}

  /** The value and when it was stored; a hit becomes the most recently used. */
  get(key: string): { value: V; at: number } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { value: entry.value, at: entry.at };
  }

  set(key: string, value: V, at: number): void {
    this.delete(key);
    const bytes = 2 * key.length + this.limits.sizeOf(value);
    // A value larger than the whole budget is not kept (it would evict everything else).
    if (bytes > this.limits.maxBytes) return;
    this.entries.set(key, { value, at, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The estimated bytes held now. */
  get byteSize(): number {
    return this.bytes;
  }
}
