// The worker's watch on its own process memory, every `monitorMs`: pause
// above `pause`, spill LRU values above `spill` until back under `target`
// (the policy itself is memory-policy.ts), spill write failures logged at a
// bounded rate (spill-warnings.ts), writes retried early once the disk has
// room again, and a stuck worker (stuck.ts) reported with its reason.

import { native } from '../native/binding'
import type { SpillMetrics } from '../native/spill-buffer'
import type { WorkerStore } from './store'
import { memoryAction } from './memory-policy'
import { lowestOn, spillFloor } from '../config/thresholds'
import type { StuckReason, StuckReport, Thresholds, WorkerStatus } from '../wire/protocol'
import { SpillWarnings } from './spill-warnings'
import { MemoryLog } from './memory-log'
import { freeBytes, StuckDetector } from './stuck'
import { storeError, stuckSummary } from '../wire/stuck-error'
import { HeapTrim } from './heap-trim'

const SMALL = 2 ** 20
/** A task's own check is skipped when the last one is this recent. */
const RECHECK_MS = 5

/** A spill disk with no room for a value about to be stored, in figures. */
export interface SpillRoom {
  bytes: number
  freeBytes: number | undefined
  maxSpill: number | null
  spilledBytes: number
  spillDir: string
  rss: number
  memoryLimit: number
  lastWriteError?: string
}

export interface MonitorOptions {
  stuckTimeoutMs: number
  /** The task runner's counts: running tasks may still free memory; finished ones are progress. */
  activity: () => { executing: number; done: number; failed: number }
  /** Where paused / resumed and unmanaged-memory lines go, at their level (default: warn). */
  log?: (level: 'warn' | 'info', message: string) => void
  /** The timer's period: free heap is given back at most this often. */
  monitorMs: number
}

export class MemoryMonitor {
  status: WorkerStatus = 'running'
  // Buffers of reductions in flight (a spilled chunk's payload and its
  // decoded copy) live for milliseconds; evicting managed values to make room
  // for them only writes values to disk during a read-only scan.
  transientBytes = 0
  #evicting = false
  #lastCheck = -Infinity
  #pausedSeconds = 0
  #pausedSince: number | undefined
  #lastGc = 0
  readonly #warnings: SpillWarnings
  readonly #log: MemoryLog
  readonly #stuck: StuckDetector
  readonly #trim: HeapTrim
  /** Free bytes on the spill disk after the last failed write, and that write's count. */
  #freeAtFailure: number | undefined
  #failuresSeen = 0
  #capRefusalsSeen = 0

  constructor(
    private readonly buffer: WorkerStore,
    private readonly memoryLimit: number,
    public thresholds: Thresholds,
    private readonly onStatus: () => void,
    private readonly warn: (message: string) => void,
    private readonly options: MonitorOptions,
  ) {
    this.#warnings = new SpillWarnings(warn)
    this.#log = new MemoryLog(options.log ?? ((_, message) => warn(message)), memoryLimit)
    this.#stuck = new StuckDetector(options.stuckTimeoutMs)
    this.#trim = new HeapTrim(options.monitorMs, () => this.#rss())
  }

  /** Seconds spent paused so far, the current pause included. */
  get pausedSeconds(): number {
    return this.#pausedSeconds + (this.#pausedSince === undefined ? 0 : (performance.now() - this.#pausedSince) / 1000)
  }

  #timePaused(next: WorkerStatus): void {
    if (next === 'paused') this.#pausedSince ??= performance.now()
    else if (this.#pausedSince !== undefined) {
      this.#pausedSeconds += (performance.now() - this.#pausedSince) / 1000
      this.#pausedSince = undefined
    }
  }

  /** Set while the worker is stuck: paused, unable to spill, no progress. */
  get stuck(): StuckReport | undefined {
    return this.#stuck.report
  }

  /**
   * Status and spilling as of now, before a task starts, unless they were
   * updated in the last few milliseconds: tasks that each add a chunk can
   * otherwise carry the process well past `pause` between two of the
   * timer's checks (150 chunks of 4 MB were made in 0.2 s on 2 workers; the
   * timer checks every 100 ms). Warnings and the stuck watch stay on the
   * timer's cadence.
   */
  checkSoon(): void {
    if (performance.now() - this.#lastCheck >= RECHECK_MS) this.#react(this.buffer.metrics())
  }

  check(): void {
    const m = this.buffer.metrics()
    const rss = this.#react(m)
    // With spill off nothing is spilled by process memory, so there is no "cannot spill" to report (as Dask).
    const spill = this.thresholds.spill
    if (spill !== false && rss > spill * this.memoryLimit && this.buffer.spillable(m) < SMALL) this.#log.unmanagedHigh(rss, m.memoryBytes)
    this.#warnings.update(m.writeFailures, m.consecutiveWriteFailures, m.lastWriteError)
    if (m.spillCapRefusals > this.#capRefusalsSeen) {
      this.#capRefusalsSeen = m.spillCapRefusals
      this.#log.spillCapReached(this.buffer.buffer.maxSpill ?? 0)
    }
    this.#retryWhenSpaceFreed(m)
    this.#checkStuck(m, rss)
  }

  /** Pauses or resumes, and starts spilling, for the process memory now; returns it. */
  #react(m: SpillMetrics): number {
    this.#lastCheck = performance.now()
    let rss = this.#rss()
    if (rss > lowestOn(this.thresholds) * this.memoryLimit) rss = this.#reclaim(rss, m.memoryBytes)
    const action = memoryAction(rss, this.memoryLimit, this.thresholds, m.memoryBytes)
    if (action.status !== this.status && this.status !== 'closing') {
      this.#timePaused(action.status)
      this.status = action.status
      this.#log.status(action.status, rss)
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
    return rss
  }

  /**
   * Writes back off after failing for want of space (up to 5 s); once the
   * disk has room for about a spilled value again (released keys' files
   * removed, another process done), the next write goes at once.
   */
  #retryWhenSpaceFreed(m: SpillMetrics): void {
    if (!(m.spillBackoffSeconds > 0 && m.lastWriteNoSpace)) return
    const free = freeBytes(this.buffer.dir)
    if (free === undefined) return
    if (m.writeFailures !== this.#failuresSeen || this.#freeAtFailure === undefined) {
      this.#failuresSeen = m.writeFailures
      this.#freeAtFailure = free
      return
    }
    const typical = m.diskCount > 0 ? m.spilledBytes.disk / m.diskCount : SMALL
    if (free >= this.#freeAtFailure + Math.max(SMALL, typical)) {
      this.#freeAtFailure = free
      this.buffer.retrySpillNow()
    }
  }

  #checkStuck(m: SpillMetrics, rss: number): void {
    const a = this.options.activity()
    const spillable = this.buffer.spillable(m)
    const state = {
      paused: this.status === 'paused',
      executing: a.executing,
      spillable,
      consecutiveWriteFailures: m.consecutiveWriteFailures,
      lastWriteNoSpace: m.lastWriteNoSpace,
      progress: `${m.spillCount}/${a.done}/${a.failed}/${m.managedBytes}`,
    }
    const describe = (reason: StuckReason, since: number): StuckReport => ({
      reason,
      since,
      spillDir: this.buffer.dir,
      freeBytes: freeBytes(this.buffer.dir),
      waitingBytes: Math.min(spillable, Math.max(0, Math.ceil(rss - lowestOn(this.thresholds) * this.memoryLimit))),
      rss,
      memoryLimit: this.memoryLimit,
      lastWriteError: m.lastWriteError,
    })
    if (!this.#stuck.update(state, describe)) return
    const r = this.#stuck.report
    this.warn(r ? `stuck: ${stuckSummary(r)}` : 'no longer stuck: spilling or running again')
    this.onStatus()
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
    const { spill } = this.thresholds
    const floor = spillFloor(this.thresholds)
    // With spill off, process memory never spills: the task runs, and pause and terminate still watch.
    if (bytes < SMALL || spill === false || floor === false) return
    const ceiling = spill * this.memoryLimit
    let rss = this.#rss()
    if (rss + bytes <= ceiling) return
    const m = this.buffer.metrics()
    rss = this.#reclaim(rss, m.memoryBytes, true)
    if (rss + bytes <= ceiling) return
    const excess = rss + bytes - floor * this.memoryLimit
    await this.buffer.evictUntil(Math.max(0, m.memoryBytes - excess)).catch((e) => this.warn(`spill failed: ${e.message}`))
  }

  /**
   * Why a task's result of `bytes` cannot be stored, if it cannot: keeping
   * it in memory would cross the terminate threshold, and the spill disk
   * cannot take it (writes failing, or fewer free bytes than the result;
   * a result that would compress to fit is refused too, as the write cannot
   * be tried without the copy that crosses the threshold).
   */
  cannotStore(key: string, bytes: number): Error | undefined {
    if (bytes < SMALL) return undefined
    let rss = process.memoryUsage.rss()
    const terminate = this.thresholds.terminate * this.memoryLimit
    if (rss + bytes <= terminate) return undefined
    // Free heap is no reason to refuse a result.
    rss = this.#trim.after(rss)
    if (rss + bytes <= terminate) return undefined
    const m = this.buffer.metrics()
    const free = freeBytes(this.buffer.dir)
    if (m.consecutiveWriteFailures === 0 && (free === undefined || free >= bytes)) return undefined
    return storeError(key, bytes, terminate, {
      reason: m.consecutiveWriteFailures > 0 && !m.lastWriteNoSpace ? 'spill-failing' : 'spill-full',
      since: Date.now(),
      spillDir: this.buffer.dir,
      freeBytes: free,
      waitingBytes: bytes,
      rss,
      memoryLimit: this.memoryLimit,
      lastWriteError: m.lastWriteError,
    })
  }

  /**
   * Where `bytes` more would take the process past `pause` (garbage
   * collected first) and the spill disk cannot take them (at its maxSpill
   * cap, its writes failing for want of space, or fewer free bytes than
   * that), the figures that say so; undefined while they fit.
   */
  spillRoom(bytes: number): SpillRoom | undefined {
    const ceiling = this.thresholds.pause * this.memoryLimit
    let rss = this.#rss()
    if (rss + bytes <= ceiling) return undefined
    const m = this.buffer.metrics()
    const maxSpill = this.buffer.buffer.maxSpill
    const capLeft = maxSpill === null ? Infinity : maxSpill - m.spilledBytes.disk
    const noSpace = m.consecutiveWriteFailures > 0 && m.lastWriteNoSpace
    const free = freeBytes(this.buffer.dir)
    if (!m.spillCapReached && !noSpace && capLeft >= bytes && (free === undefined || free >= bytes)) return undefined
    // Collected only once the disk is known full: shards go by often, and a full collection is not cheap.
    rss = this.#reclaim(rss, m.memoryBytes)
    if (rss + bytes <= ceiling) return undefined
    return { bytes, freeBytes: free, maxSpill, spilledBytes: m.spilledBytes.disk, spillDir: this.buffer.dir, rss, memoryLimit: this.memoryLimit, lastWriteError: m.lastWriteError }
  }

  /**
   * After a task dropped a large value: collects its garbage at once when
   * the process is above its target, where the next task's peak could
   * otherwise cross a threshold. Below it, V8 collects on its own schedule.
   */
  collectNow(): void {
    const rss = process.memoryUsage.rss()
    if (rss > lowestOn(this.thresholds) * this.memoryLimit) this.#reclaim(rss, 0, true)
  }

  /** Process memory less the reductions' short-lived buffers. */
  #rss(): number {
    return Math.max(0, process.memoryUsage.rss() - this.transientBytes)
  }

  /**
   * Memory that is free but still resident, given back before it is taken
   * for data: V8's garbage first (it frees buffers into malloc's heap), then
   * the heap's free pages (heap-trim.ts), measuring again after each.
   */
  #reclaim(rss: number, managedInMemory: number, force = false): number {
    return this.#trim.after(this.#collect(rss, managedInMemory, force))
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
    return this.#rss()
  }
}
