// The worker's watch on its own process memory, every `monitorMs`: pause
// above `pause`, spill LRU values above `spill` until back under `target`
// (the policy itself is memory-policy.ts), and one warning per new spill
// write failure.

import { native } from '../../native'
import type { WorkerStore } from './store'
import { memoryAction } from '../memory-policy'
import type { Thresholds, WorkerStatus } from '../protocol'

const SMALL = 2 ** 20

export class MemoryMonitor {
  status: WorkerStatus = 'running'
  // Buffers of reductions in flight (a spilled chunk's payload and its
  // decoded copy) live for milliseconds; evicting managed values to make room
  // for them only writes values to disk during a read-only scan.
  transientBytes = 0
  #evicting = false
  #reportedFailures = 0
  #lastGc = 0

  constructor(
    private readonly buffer: WorkerStore,
    private readonly memoryLimit: number,
    public thresholds: Thresholds,
    private readonly onStatus: () => void,
    private readonly warn: (message: string) => void,
  ) {}

  check(): void {
    const m = this.buffer.metrics()
    let rss = Math.max(0, process.memoryUsage.rss() - this.transientBytes)
    if (rss > this.thresholds.target * this.memoryLimit) rss = this.#collect(rss, m.memoryBytes)
    const action = memoryAction(rss, this.memoryLimit, this.thresholds, m.memoryBytes)
    if (action.status !== this.status && this.status !== 'closing') {
      this.status = action.status
      this.onStatus()
    }
    if (action.evictTo !== undefined && !this.#evicting) {
      // Idle reusable buffers are the cheapest memory to give back.
      native.releasePooledMemory()
      this.#evicting = true
      this.buffer
        .evictUntil(action.evictTo)
        .catch((e) => this.warn(`spill failed: ${e.message}`))
        .finally(() => (this.#evicting = false))
    }
    if (m.lastWriteError && m.writeFailures > this.#reportedFailures) {
      this.#reportedFailures = m.writeFailures
      this.warn(`spill write failed (kept in memory): ${m.lastWriteError}`)
    }
  }

  /**
   * Makes room before a user task that may allocate `bytes` (its result and
   * the copy the store takes): a task's spike on top of a worker sitting at
   * its spill threshold would otherwise cross `terminate` before the next
   * check could spill.
   */
  async makeRoom(bytes: number): Promise<void> {
    // Small tasks cannot cross a threshold on their own; reading the
    // process's memory would cost more than they do.
    if (bytes < SMALL) return
    const ceiling = this.thresholds.spill * this.memoryLimit
    let rss = Math.max(0, process.memoryUsage.rss() - this.transientBytes)
    if (rss + bytes <= ceiling) return
    const m = this.buffer.metrics()
    rss = this.#collect(rss, m.memoryBytes, true)
    if (rss + bytes <= ceiling) return
    const excess = rss + bytes - this.thresholds.target * this.memoryLimit
    await this.buffer.evictUntil(Math.max(0, m.memoryBytes - excess)).catch((e) => this.warn(`spill failed: ${e.message}`))
  }

  /**
   * After a task dropped a large value: collects its garbage at once when
   * the process is above its target, where the next task's peak could
   * otherwise cross a threshold. Below it, V8 collects on its own schedule.
   */
  collectNow(): void {
    const rss = process.memoryUsage.rss()
    if (rss > this.thresholds.target * this.memoryLimit) this.#collect(rss, 0, true)
  }

  /**
   * User tasks leave their inputs, results and encodings as garbage that
   * V8 frees only at its next collection; above the target, when much of
   * the process is not managed data, collect it now rather than spill
   * managed values (or pause) for memory that is already free.
   */
  #collect(rss: number, managedInMemory: number, force = false): number {
    const gc = (globalThis as { gc?: () => void }).gc
    const now = Date.now()
    if (!gc || (!force && (now - this.#lastGc < 250 || rss - managedInMemory < 0.1 * this.memoryLimit))) return rss
    this.#lastGc = now
    gc()
    return Math.max(0, process.memoryUsage.rss() - this.transientBytes)
  }
}
