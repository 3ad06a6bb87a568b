// What a stuck worker says, in its log and in the error of the work it
// holds up: where it spills, how much room is left there, how much waits to
// be written, and what the user can do about it.

import { WorkerStuckError } from '../base/errors'
import type { StuckReport } from './protocol'

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`

/** One line on why a worker is stuck. */
export function stuckSummary(r: StuckReport, now = Date.now()): string {
  const secs = Math.round((now - r.since) / 1000)
  if (r.reason === 'nothing-to-spill') {
    return `paused at ${mib(r.rss)} of its ${mib(r.memoryLimit)} limit with no managed value left in memory to spill; no progress for ${secs} s`
  }
  const free = r.freeBytes === undefined ? 'unknown free space' : `${mib(r.freeBytes)} free`
  const cause = r.reason === 'spill-full' ? 'its spill disk is full' : 'its spill writes fail'
  return `paused and cannot spill (${cause}): ${r.spillDir} has ${free} and ${mib(r.waitingBytes)} of values wait to be written${r.lastWriteError ? ` (${r.lastWriteError})` : ''}; no progress for ${secs} s`
}

const ADVICE = {
  'spill-full':
    'release results you no longer need (they free memory and spill space), give the job more local disk (SLURM --tmp, PBS jobfs / -l jobfs=), set tempBaseDir to a bigger filesystem, use a stronger spillCompression (zstd), or work in fewer or smaller chunks',
  'spill-failing': 'check that the spill directory is still there and writable, or set tempBaseDir to another filesystem',
  'nothing-to-spill':
    'memory is held outside spillway’s store (large values kept by your functions or module state); release results you no longer need, raise memoryPause, or give each worker more memory',
}

/** The error of a task whose result fits neither in its worker's memory nor on its spill disk. */
export function storeError(key: string, bytes: number, terminateBytes: number, r: StuckReport): WorkerStuckError {
  const free = r.freeBytes === undefined ? 'unknown free space' : `${mib(r.freeBytes)} free`
  const message =
    `task ${JSON.stringify(key)}: its result of ${mib(bytes)} cannot be stored: kept in memory it would take the worker ` +
    `(${mib(r.rss)} in use) past its terminate threshold of ${mib(terminateBytes)}, and its spill directory ${r.spillDir} has ${free}` +
    `${r.lastWriteError ? ` (${r.lastWriteError})` : ''}. What to do: ${ADVICE[r.reason]}. What the workers already hold is kept.`
  return new WorkerStuckError(r.reason === 'spill-full' ? 'ERR_SPILLWAY_SPILL_FULL' : 'ERR_SPILLWAY_WORKER_STUCK', message, { key, bytes, workers: [r] })
}

/** The error of work that cannot run because the workers it may use are stuck. */
export function stuckError(stuck: Array<{ worker: string; report: StuckReport }>, key?: string): WorkerStuckError {
  const full = stuck.some((s) => s.report.reason === 'spill-full')
  const what = key ? `task ${JSON.stringify(key)} cannot run` : 'the work cannot run'
  const lines = stuck.map((s) => `${s.worker} is ${stuckSummary(s.report)}`)
  const reasons = [...new Set(stuck.map((s) => s.report.reason))]
  const message = `${what}: ${stuck.length === 1 ? 'its only worker is stuck' : `all ${stuck.length} workers it may use are stuck`}. ${lines.join('. ')}. What to do: ${reasons.map((r) => ADVICE[r]).join('; ')}. What the workers already hold is kept.`
  return new WorkerStuckError(full ? 'ERR_SPILLWAY_SPILL_FULL' : 'ERR_SPILLWAY_WORKER_STUCK', message, {
    key,
    workers: stuck.map((s) => ({ worker: s.worker, ...s.report })),
  })
}
