// Rate-limited logging of events a peer can cause as often as it likes
// (refused connections, malformed messages): within an interval the first
// event of each reason is logged in full, the rest are counted and told in
// one summary line when the interval ends, so a flood cannot turn the log
// into a copy of itself.

export type LogFn = (level: string, message: string) => void

export const SUMMARY_INTERVAL_MS = 10_000
/** Reasons logged in full per interval; a peer that varies its reason gets no more lines than this. */
const FULL_LINES = 5

export class SummaryLog {
  /** Every event reported, logged or not. */
  total = 0
  readonly #seen = new Set<string>()
  readonly #held = new Map<string, number>()
  #heldCount = 0
  #timer: NodeJS.Timeout | undefined
  #since = 0

  constructor(
    private readonly log: LogFn | undefined,
    /** What the events are, for the summary: 'worker connections refused'. */
    private readonly what: string,
    private readonly intervalMs = SUMMARY_INTERVAL_MS,
  ) {}

  /** `reason` groups events (it must not hold a port or a count); `line` is logged when it is the reason's first this interval. */
  report(reason: string, line: string): void {
    this.total++
    if (!this.#timer) {
      this.#since = Date.now()
      this.#timer = setTimeout(() => this.flush(), this.intervalMs)
      this.#timer.unref()
    }
    if (!this.#seen.has(reason) && this.#seen.size < FULL_LINES) {
      this.#seen.add(reason)
      this.log?.('warn', line)
      return
    }
    this.#heldCount++
    this.#held.set(reason, (this.#held.get(reason) ?? 0) + 1)
  }

  /** Logs what the interval held back, if anything, and starts a new interval. */
  flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#seen.clear()
    if (this.#heldCount === 0) return
    const top = [...this.#held].sort((a, b) => b[1] - a[1])
    const shown = top.slice(0, 3).map(([r, n]) => `${n} × ${r}`)
    if (top.length > 3) shown.push(`${top.length - 3} other reasons`)
    const s = Math.max(1, Math.round((Date.now() - this.#since) / 1000))
    this.log?.('warn', `${this.#heldCount} more ${this.what} in the last ${s} s (${shown.join('; ')})`)
    this.#held.clear()
    this.#heldCount = 0
  }
}
