// Waits between tries of something that fails for a while (a scheduler that
// drops connections under load). Each wait doubles, from `firstMs` to
// `maxMs`, as the core's spill backoff does; each is drawn between half and
// all of that (jitter), so workers cut off together do not all come back in
// the same instant and get cut off together again. Dask's connect retries
// the same way.

export interface BackoffOptions {
  firstMs?: number
  maxMs?: number
  /** Uniform in [0, 1): Math.random, or a seeded one in tests. */
  random?: () => number
}

export interface Backoff {
  /** The wait before the next try, after one more failure. */
  next(): number
  /** Failures so far. */
  readonly failures: number
}

export function backoff({ firstMs = 100, maxMs = 5_000, random = Math.random }: BackoffOptions = {}): Backoff {
  let failures = 0
  return {
    get failures() {
      return failures
    },
    next() {
      const cap = Math.min(maxMs, firstMs * 2 ** Math.min(failures, 30))
      failures++
      return Math.round(cap / 2 + (random() * cap) / 2)
    },
  }
}
