// How long a nanny waits before starting a dead worker again. A worker that
// lived a while died of its work (memory, a task): replace it at once. One
// that keeps dying young has a problem a restart does not fix: each try
// waits longer, and after a bound the nanny stops, so a broken setup shows
// as one clear failure instead of hundreds of processes.

/** A worker that lived this long before it died starts the count afresh. */
export const HEALTHY_MS = 30_000
/** Deaths in a row, each younger than HEALTHY_MS, after which its nanny stops. */
export const MAX_QUICK_DEATHS = 8
const FIRST_DELAY_MS = 250
const MAX_DELAY_MS = 8_000

export interface CrashBackoff {
  /** The delay before the next start, or 'give-up'; `livedMs` is how long the dead one lived. */
  next(livedMs: number): number | 'give-up'
  /** Deaths in a row so far. */
  readonly count: number
}

export function crashBackoff(maxQuickDeaths = MAX_QUICK_DEATHS): CrashBackoff {
  let count = 0
  return {
    get count() {
      return count
    },
    next(livedMs: number) {
      if (livedMs >= HEALTHY_MS) count = 0
      count++
      if (count > maxQuickDeaths) return 'give-up'
      // The first death is replaced at once: a killed worker (memory, a
      // test's SIGKILL) is the common case and must not wait.
      return count === 1 ? 0 : Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (count - 2))
    },
  }
}
