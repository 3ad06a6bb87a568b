// A worker process: one SpillBuffer, tasks run natively off the JS thread,
// memory watched every `monitorMs`, heartbeats every `heartbeatMs`. It exits
// as soon as its parent goes away, so a crashed scheduler leaves no workers.

import { join } from 'node:path'
import { SpillBuffer } from '../spill-buffer'
import { memoryAction } from './memory-policy'
import type { Request, SchedulerToWorker, Thresholds, WorkerMetrics, WorkerStart, WorkerStatus, WorkerToScheduler } from './protocol'
import { ParentTransport } from './transport'
import { RUNNERS } from './worker-tasks'

const transport = new ParentTransport<SchedulerToWorker, WorkerToScheduler>()
let config: WorkerStart | undefined
let buffer: SpillBuffer | undefined
let thresholds: Thresholds
let status: WorkerStatus = 'running'
let evicting = false
const counts = { executing: 0, done: 0, failed: 0 }
const timers: NodeJS.Timeout[] = []

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
  const action = memoryAction(process.memoryUsage.rss(), config.memoryLimit, thresholds, m.memoryBytes)
  if (action.status !== status && status !== 'closing') {
    status = action.status
    heartbeat()
  }
  if (action.evictTo !== undefined && !evicting) {
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
  if (!buffer) throw new Error(`worker got ${req.op} before start`)
  switch (req.op) {
    case 'run': {
      counts.executing++
      try {
        const nbytes = await RUNNERS[req.task.fn](buffer, req.key, req.task)
        counts.done++
        return { nbytes, metrics: metrics() }
      } catch (e) {
        counts.failed++
        throw e
      } finally {
        counts.executing--
      }
    }
    case 'reduce':
      return { partial: await buffer.reduce(req.key, req.dtype, req.reduceOp) }
    case 'release':
      for (const k of req.keys) buffer.delete(k)
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
