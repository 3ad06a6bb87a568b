// Graceful retirement (Dask's RetireWorker): a worker that must leave takes
// no new work, lets what it runs finish (for `drainMs`, then the rest goes
// elsewhere), and hands every value it alone holds to the other workers
// before it stops. Only values it cannot hand over are made again. When the
// others cannot take what it holds, it says so and the worker stays.
//
// Receivers are chosen by room: memory up to their pause threshold plus
// their spill disk's free space, largest values first to the roomiest. A
// receiver that pauses while taking values in is not sent more.

import { SpillwayError } from '../base/errors'
import { formatBytes } from '../base/units'
import type { Thresholds } from '../wire/protocol'
import { copyValues, pausedByUnmanaged, roomOn, type CopyHost, type CopyOutcome } from './copy-values'
import { canTakeOver, dropReplica, moveHolder } from './replicas'
import type { TaskRecord, WorkerHandle } from './state'

/** What this needs of the scheduler. */
export interface RetireHost extends CopyHost {
  readonly workers: Map<string, WorkerHandle>
  readonly thresholds: Thresholds
  pump(): void
  withdraw(t: TaskRecord, w: WorkerHandle): void
  recompute(t: TaskRecord, w: WorkerHandle): void
  emit(event: string, ...args: unknown[]): boolean
}

export interface RetireOptions {
  /** Stop the workers once their values have moved (default true); else they stay, holding nothing and taking no work. */
  closeWorkers?: boolean
  /** How long running tasks may take to finish before they are sent elsewhere (default 30 s). */
  drainMs?: number
}

export interface RetireReport {
  address: string
  name: string
  /** Values copied to other workers. */
  moved: number
  movedBytes: number
  /** Values another worker already had a copy of. */
  handedOver: number
  /** Values it could not hand over, made again. */
  recomputed: number
  seconds: number
}

const POLL_MS = 25
/** How long a retirement waits for paused receivers that can spill their way back (no progress meanwhile) before it gives up. */
export const RECEIVER_WAIT_MS = 30_000

export async function retireWorkers(host: RetireHost, targets: WorkerHandle[], options: RetireOptions = {}): Promise<RetireReport[]> {
  const { closeWorkers = true, drainMs = 30_000 } = options
  targets = [...new Set(targets)]
  for (const w of targets) w.retiring = true
  host.pump()
  const receivers = () => [...host.workers.values()].filter((r) => r.alive && !r.retiring && !r.closing && !r.unresponsive)
  // A worker already being retired (by another call) is not retired twice at once: this call waits on that retirement.
  const runs = targets.map((w) => (w.retirement ??= moveAway(host, w, receivers, drainMs).finally(() => (w.retirement = undefined))))
  const settled = await Promise.allSettled(runs)
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) {
    for (const w of targets) if (w.alive && !w.retirement) w.retiring = false
    host.pump()
    throw failed.reason
  }
  if (closeWorkers) await Promise.all(targets.map((w) => stop(w)))
  return settled.map((s) => (s as PromiseFulfilledResult<RetireReport>).value)
}

/**
 * A worker asks to leave (its lifetime is up): retired gracefully, or,
 * should the others not take its values, closed all the same (it must go),
 * its values made again.
 */
export function retireAsked(host: RetireHost, w: WorkerHandle, reason: string): void {
  if (w.retiring || !w.alive) return
  host.emit('worker-retiring', w, reason)
  retireWorkers(host, [w]).then(
    ([report]) => host.emit('worker-retired', w, report),
    (e) => {
      host.emit('worker-retire-failed', w, e)
      void stop(w)
    },
  )
}

async function stop(w: WorkerHandle): Promise<void> {
  if (!w.alive) return
  w.expectedExit = true
  if (w.close) return w.close()
  await w.rpc.request({ op: 'close' }).catch(() => {})
}

async function moveAway(host: RetireHost, w: WorkerHandle, receivers: () => WorkerHandle[], drainMs: number): Promise<RetireReport> {
  const started = performance.now()
  const report: RetireReport = { address: w.address, name: w.name, moved: 0, movedBytes: 0, handedOver: 0, recomputed: 0, seconds: 0 }
  const deadline = Date.now() + drainMs
  const full = new Set<WorkerHandle>()
  let lastError: string | undefined
  let waitUntil = Date.now() + RECEIVER_WAIT_MS
  while (w.alive) {
    // Its copies of values held elsewhere are simply let go of.
    for (const t of [...w.replicas]) {
      dropReplica(t, w)
      host.releaseCopy(w, t.key)
    }
    const open = receivers().filter((r) => !full.has(r) && r.status === 'running')
    const pending: TaskRecord[] = []
    for (const t of w.held) {
      if (t.state !== 'memory' || t.worker !== w) continue
      const copy = t.replicas && [...t.replicas].find((r) => r.alive && !r.retiring)
      if (copy) {
        moveHolder(host, t, copy)
        report.handedOver++
      } else pending.push(t)
    }
    if (pending.length && !open.length && Date.now() < waitUntil && receivers().some(mayResume)) {
      // Paused by values it is spilling (it took many at once): it runs again soon.
      full.clear()
      await new Promise((r) => setTimeout(r, 4 * POLL_MS))
      continue
    }
    if (pending.length) {
      const plan = assign(pending, open, host.thresholds.pause)
      if ('short' in plan) throw cannotRetire(w, pending, open, plan.short, lastError)
      // Each receiver's outcome is taken as it comes: the copies are replicas
      // by then, and one becomes the holder only while the value is still w's.
      await Promise.all(
        [...plan.to].map(([r, ts]) =>
          copyValues(host, w, r, ts)
            .catch((): CopyOutcome => ({ copied: [], missing: [], refused: ts }))
            .then((o) => {
              if (o.copied.length) waitUntil = Date.now() + RECEIVER_WAIT_MS
              for (const t of o.copied) {
                if (!canTakeOver(t, w, r)) continue
                moveHolder(host, t, r)
                report.moved++
                report.movedBytes += t.nbytes
              }
              if (o.error) lastError = `${r.address}: ${o.error}`
              if (o.refused.length || r.retiring || r.closing) full.add(r)
              for (const t of o.missing) {
                if (t.worker !== w || t.state !== 'memory' || !w.alive) continue
                host.recompute(t, w)
                report.recomputed++
              }
            }),
        ),
      )
      continue
    }
    if (w.processing.size === 0) break
    if (Date.now() > deadline) for (const t of [...w.processing]) host.withdraw(t, w)
    await new Promise((r) => setTimeout(r, POLL_MS))
  }
  report.seconds = (performance.now() - started) / 1000
  return report
}

/** A paused worker that is not stuck and holds memory it can spill: it will take values again. */
function mayResume(r: WorkerHandle): boolean {
  return r.status === 'paused' && !r.stuck && r.metrics !== undefined && !pausedByUnmanaged(r.metrics, r.memoryLimit)
}

/** Largest values first, each to the receiver with the most room left; `short` when they do not fit. */
export function assign(values: TaskRecord[], receivers: WorkerHandle[], pause: number): { to: Map<WorkerHandle, TaskRecord[]> } | { short: number } {
  const room = new Map(receivers.map((r) => [r, roomOn(r, pause)]))
  const to = new Map<WorkerHandle, TaskRecord[]>()
  let short = 0
  for (const t of [...values].sort((a, b) => b.nbytes - a.nbytes)) {
    let best: WorkerHandle | undefined
    for (const [r, n] of room) if (!best || n > room.get(best)!) best = r
    if (!best || room.get(best)! < t.nbytes) {
      short += t.nbytes
      continue
    }
    room.set(best, room.get(best)! - t.nbytes)
    to.get(best)?.push(t) ?? to.set(best, [t])
  }
  return short > 0 ? { short } : { to }
}

function cannotRetire(w: WorkerHandle, pending: TaskRecord[], open: WorkerHandle[], short: number, lastError?: string): SpillwayError {
  const bytes = pending.reduce((n, t) => n + t.nbytes, 0)
  const why = open.length
    ? `the other running workers (${open.map((r) => r.address).join(', ')}) have room for ${formatBytes(bytes - short)} of its ${formatBytes(bytes)}`
    : 'no other worker is running to take them (the others are paused, retiring or gone)'
  return new SpillwayError(
    'ERR_SPILLWAY_RETIRE_FAILED',
    `worker ${w.address} (${w.name}) was not retired: it holds ${pending.length} value(s) no other worker has (${formatBytes(bytes)}) and ${why}${lastError ? ` (the last copy failed: ${lastError})` : ''}; it keeps them and stays`,
    { worker: w.address, values: pending.length, bytes, shortBytes: short, receivers: open.map((r) => r.address), lastError },
  )
}
