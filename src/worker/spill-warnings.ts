// Spill write failures as a readable log. A full disk fails every write
// the same way, dozens a second: the first failure of each cause gets a line
// of its own, later ones a count at most every `intervalMs`, and the return
// of working writes a line that says how many failed. Every failure is still
// counted in the metrics (writeFailures).

export const SUMMARY_INTERVAL_MS = 5000

interface Cause {
  /** Failures not yet reported. */
  pending: number
  total: number
}

/** The part of a write error that names its cause, without the file's path (which differs per write). */
export function failureCause(message: string): string {
  const i = message.lastIndexOf(' failed: ')
  return i >= 0 ? message.slice(i + ' failed: '.length) : message
}

export class SpillWarnings {
  readonly #causes = new Map<string, Cause>()
  #seen = 0
  #summaryAt = 0

  constructor(
    private readonly warn: (message: string) => void,
    private readonly intervalMs = SUMMARY_INTERVAL_MS,
  ) {}

  /**
   * Takes the buffer's running counts: `writeFailures` (all failures so far),
   * `consecutive` (failures since the last write that landed) and the last
   * error's message.
   */
  update(writeFailures: number, consecutive: number, lastError: string | undefined, now = Date.now()): void {
    const fresh = writeFailures - this.#seen
    this.#seen = writeFailures
    if (fresh > 0 && lastError) {
      const cause = failureCause(lastError)
      const c = this.#causes.get(cause)
      if (c) {
        c.pending += fresh
        c.total += fresh
      } else {
        this.#causes.set(cause, { pending: fresh - 1, total: fresh })
        this.warn(`spill write failed (values stay in memory; writes are retried with backoff): ${lastError}`)
        this.#summaryAt = now
      }
    }
    if (consecutive === 0 && this.#causes.size > 0) {
      this.#summarize()
      const total = [...this.#causes.values()].reduce((n, c) => n + c.total, 0)
      this.warn(`spill writes succeed again after ${total} failed`)
      this.#causes.clear()
      return
    }
    if (now - this.#summaryAt >= this.intervalMs) {
      this.#summaryAt = now
      this.#summarize()
    }
  }

  #summarize(): void {
    for (const [cause, c] of this.#causes) {
      if (c.pending === 0) continue
      this.warn(`${c.pending} more spill write failure${c.pending === 1 ? '' : 's'} (${cause}); ${c.total} so far`)
      c.pending = 0
    }
  }
}
