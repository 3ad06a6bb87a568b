// A worker process: one SpillBuffer, tasks run natively off the JS thread,
// memory watched every `monitorMs`, heartbeats every `heartbeatMs`. It exits
// as soon as its parent goes away, so a crashed scheduler leaves no workers.

import { join } from 'node:path'
import { SpillwayError } from '../errors'
import { native } from '../native'
import { SpillBuffer } from '../spill-buffer'
import { memoryAction } from './memory-policy'
import { UNREADABLE_CODES } from './protocol'
import type { ReduceManyResult, Request, RunResult, SchedulerToWorker, Thresholds, WorkerMetrics, WorkerStart, WorkerStatus, WorkerToScheduler } from './protocol'
import { ParentTransport } from './transport'
import { RUNNERS } from './worker-tasks'

const transport = new ParentTransport<SchedulerToWorker, WorkerToScheduler>()
let config: WorkerStart | undefined
let buffer: SpillBuffer | undefined
let thresholds: Thresholds
let status: WorkerStatus = 'running'
let evicting = false
// Buffers of reductions in flight (a spilled chunk's payload and its decoded
// copy) live for milliseconds; evicting managed chunks to make room for them
// only writes chunks to disk during a read-only scan.
let transientBytes = 0
const counts = { executing: 0, done: 0, failed: 0 }
const timers: NodeJS.Timeout[] = []
// Tasks sent ahead wait here; at most nthreads run, and none start while paused.
const ready: Array<() => void> = []
let running = 0
let lastMetricsAt = 0
// Runs wait for a slot; one whose key is released meanwhile is skipped, not
// computed only to be freed. Requests are numbered so a run sent after the
// release (the key persisted again) still runs.
let requestSeq = 0
const waitingRuns = new Map<string, number>()
const releasedAt = new Map<string, number>()

function slot(): Promise<void> {
  if (running < config!.nthreads && status === 'running' && ready.length === 0) {
    running++
    return Promise.resolve()
  }
  return new Promise((resolve) => ready.push(resolve))
}

function freeSlot() {
  running--
  startReady()
}

function startReady() {
  while (ready.length && running < config!.nthreads && status === 'running') {
    running++
    ready.shift()!()
  }
}

/** Results carry metrics now and then; heartbeats carry the rest. */
function maybeMetrics(): WorkerMetrics | undefined {
  const now = Date.now()
  if (now - lastMetricsAt < 50) return undefined
  lastMetricsAt = now
  return metrics()
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return out
}

transport.onClose(() => process.exit(0))

function metrics(): WorkerMetrics {
  return {
    ...buffer!.metrics(),
    rss: process.memoryUsage.rss(),
    status,
    memoryLimit: config!.memoryLimit,
    thresholds: { ...thresholds },
    taskCounts: { ...counts },
    time: Date.now(),
  }
}

function heartbeat() {
  if (buffer) transport.send({ kind: 'heartbeat', metrics: metrics() })
}

function watchMemory() {
  if (!buffer || !config) return
  const m = buffer.metrics()
  const action = memoryAction(Math.max(0, process.memoryUsage.rss() - transientBytes), config.memoryLimit, thresholds, m.memoryBytes)
  if (action.status !== status && status !== 'closing') {
    status = action.status
    heartbeat()
    startReady()
  }
  if (action.evictTo !== undefined && !evicting) {
    // Idle reusable buffers are the cheapest memory to give back.
    native.releasePooledMemory()
    evicting = true
    buffer
      .evictUntil(action.evictTo)
      .catch((e) => transport.send({ kind: 'log', level: 'warn', message: `spill failed: ${e.message}` }))
      .finally(() => (evicting = false))
  }
  if (m.lastWriteError && m.writeFailures > lastReportedFailures) {
    lastReportedFailures = m.writeFailures
    transport.send({ kind: 'log', level: 'warn', message: `spill write failed (kept in memory): ${m.lastWriteError}` })
  }
}
let lastReportedFailures = 0

async function handle(req: Request): Promise<unknown> {
  if (req.op === 'start') {
    config = req.config
    thresholds = { ...config.thresholds }
    buffer = new SpillBuffer({
      dir: join(config.spillDir, config.name),
      memoryLimit: config.memoryLimit,
      target: thresholds.target,
      codec: config.codec,
      level: config.level,
    })
    timers.push(setInterval(heartbeat, config.heartbeatMs), setInterval(watchMemory, config.monitorMs))
    return { pid: process.pid }
  }
  if (!buffer) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `worker got ${req.op} before start`, { op: req.op })
  switch (req.op) {
    case 'run': {
      const seq = ++requestSeq
      waitingRuns.set(req.key, (waitingRuns.get(req.key) ?? 0) + 1)
      try {
        await slot()
      } finally {
        const left = waitingRuns.get(req.key)! - 1
        if (left) waitingRuns.set(req.key, left)
        else waitingRuns.delete(req.key)
      }
      const released = (releasedAt.get(req.key) ?? 0) > seq
      if (!waitingRuns.has(req.key)) releasedAt.delete(req.key)
      if (released) {
        freeSlot()
        return { nbytes: 0, skipped: true } satisfies RunResult
      }
      counts.executing++
      try {
        const nbytes = await RUNNERS[req.task.fn](buffer, req.key, req.task)
        counts.done++
        return { nbytes, metrics: maybeMetrics() }
      } catch (e) {
        counts.failed++
        throw e
      } finally {
        counts.executing--
        freeSlot()
      }
    }
    case 'reduce':
      return { partial: await buffer.reduce(req.key, req.dtype, req.reduceOp) }
    case 'reduce-many': {
      const b = buffer
      const m = b.metrics()
      const perRead = Math.ceil((m.managedBytes / Math.max(1, m.memoryCount + m.diskCount)) * 1.4)
      // One bad spill file must not fail the batch: the scheduler recomputes
      // that chunk and reduces the rest as they are.
      const unreadable: NonNullable<ReduceManyResult['unreadable']> = []
      const partials = await mapLimited(req.keys, config!.nthreads + 1, async (k) => {
        transientBytes += perRead
        try {
          return await b.reduce(k, req.dtype, req.reduceOp)
        } catch (e: any) {
          if (!UNREADABLE_CODES.has(e?.code)) throw e
          unreadable.push({ key: k, code: e.code, message: String(e.message) })
          return null
        } finally {
          transientBytes -= perRead
        }
      })
      return { partials, unreadable } satisfies ReduceManyResult
    }
    case 'release':
      for (const k of req.keys) {
        buffer.delete(k)
        if (waitingRuns.has(k)) releasedAt.set(k, ++requestSeq)
      }
      return { metrics: metrics() }
    case 'set-thresholds': {
      const next = { ...thresholds, ...req.thresholds }
      thresholds = next
      if (next.target !== buffer.target) await buffer.setTarget(next.target)
      watchMemory()
      return { metrics: metrics() }
    }
    case 'metrics':
      return { metrics: metrics() }
    case 'close': {
      status = 'closing'
      for (const t of timers) clearInterval(t)
      await buffer.close()
      setImmediate(() => transport.close())
      return { ok: true }
    }
  }
}

transport.onMessage(({ id, request }) => {
  handle(request).then(
    (result) => transport.send({ kind: 'reply', id, ok: true, result }),
    (e: any) => transport.send({ kind: 'reply', id, ok: false, error: { code: e?.code, message: String(e?.message ?? e) } }),
  )
})
