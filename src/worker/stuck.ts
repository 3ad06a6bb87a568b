// Whether a worker is stuck: paused, unable to spill (its writes fail, or no
// managed value is left in memory to write), nothing running, and no
// progress for `timeoutMs`. Dask's paused workers wait forever in that state
// (dask/distributed#3761, #5635); here the worker says so, with the reason,
// and the scheduler fails the work that cannot proceed (scheduler-stuck.ts).

import { statfsSync } from 'node:fs'
import type { StuckReason, StuckReport } from '../wire/protocol'

export interface WorkerState {
  paused: boolean
  /** Tasks running now: one may still finish and free memory. */
  executing: number
  /** Managed bytes in memory the store could write to disk. */
  spillable: number
  /** Failed spill writes since the last one that landed. */
  consecutiveWriteFailures: number
  lastWriteNoSpace: boolean
  /** Anything that changes when the worker gets somewhere: spills, finished tasks, values stored or freed. */
  progress: string
}

export function stuckReason(s: WorkerState): StuckReason | undefined {
  if (!s.paused || s.executing > 0) return undefined
  if (s.consecutiveWriteFailures > 0) return s.lastWriteNoSpace ? 'spill-full' : 'spill-failing'
  return s.spillable === 0 ? 'nothing-to-spill' : undefined
}

/** Bytes this user may still write under `dir`; undefined where the filesystem cannot say. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir)
    return s.bavail * s.bsize
  } catch {
    return undefined
  }
}

export class StuckDetector {
  #blockedSince: number | undefined
  #progress: string | undefined
  /** The current report while stuck. */
  report: StuckReport | undefined

  constructor(readonly timeoutMs: number) {}

  /** Returns whether the verdict changed (stuck, or no longer). */
  update(s: WorkerState, describe: (reason: StuckReason, since: number) => StuckReport, now = Date.now()): boolean {
    const reason = stuckReason(s)
    if (s.progress !== this.#progress || !reason) {
      this.#progress = s.progress
      this.#blockedSince = reason ? now : undefined
    } else this.#blockedSince ??= now
    const stuck = reason !== undefined && this.#blockedSince !== undefined && now - this.#blockedSince >= this.timeoutMs
    if (stuck && this.report?.reason !== reason) {
      this.report = describe(reason, this.#blockedSince!)
      return true
    }
    if (!stuck && this.report) {
      this.report = undefined
      return true
    }
    return false
  }
}
