// The worker's memory story in its log, in Dask's words: "paused" and
// "resumed" lines with the process memory against the limit, and the
// "unmanaged memory is high" warning when memory stays past the spill
// threshold with nothing managed left to spill. Both are rate-limited
// (Dask's RateLimiterFilter allows that warning once per 10 s): a worker
// that flaps between paused and running under pressure says so in a count,
// not a line per flap. So is the line for a spill disk at its maxSpill cap
// (Dask's "Spill file on disk reached capacity; keeping data in memory").

import { formatBytes } from '../base/units'
import type { WorkerStatus } from '../wire/protocol'

export const UNMANAGED_EVERY_MS = 10_000
export const STATUS_EVERY_MS = 5_000

export class MemoryLog {
  #statusAt = -Infinity
  #unmanagedAt = -Infinity
  #capAt = -Infinity
  #flaps = 0

  constructor(
    private readonly log: (level: 'warn' | 'info', message: string) => void,
    private readonly memoryLimit: number,
  ) {}

  status(next: WorkerStatus, rss: number, now = Date.now()): void {
    if (next !== 'paused' && next !== 'running') return
    if (now - this.#statusAt < STATUS_EVERY_MS) {
      this.#flaps++
      return
    }
    this.#statusAt = now
    const pct = Math.round((rss / this.memoryLimit) * 100)
    const flaps = this.#flaps ? ` (${this.#flaps} more pause/resume change(s) since the last line)` : ''
    this.#flaps = 0
    const what = next === 'paused' ? 'Pausing worker' : 'Resuming worker'
    this.log(next === 'paused' ? 'warn' : 'info', `worker is at ${pct}% memory usage. ${what}. Process memory: ${formatBytes(rss)} -- Worker memory limit: ${formatBytes(this.memoryLimit)}${flaps}`)
  }

  spillCapReached(maxSpill: number, now = Date.now()): void {
    if (now - this.#capAt < UNMANAGED_EVERY_MS) return
    this.#capAt = now
    this.log('warn', `spill disk reached its cap (maxSpill ${formatBytes(maxSpill)}): keeping values in memory`)
  }

  unmanagedHigh(rss: number, managedInMemory: number, now = Date.now()): void {
    if (now - this.#unmanagedAt < UNMANAGED_EVERY_MS) return
    this.#unmanagedAt = now
    this.log(
      'warn',
      `unmanaged memory use is high: memory past the spill threshold is not values spillway can spill (a task's own buffers, a leak, or memory not given back to the OS) -- Unmanaged memory: ${formatBytes(Math.max(0, rss - managedInMemory))} -- Worker memory limit: ${formatBytes(this.memoryLimit)}`,
    )
  }
}
