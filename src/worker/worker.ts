// A worker process: one SpillBuffer holding its values, a task runner, a
// data server other workers fetch from, and a memory monitor; heartbeats to
// the scheduler every `heartbeatMs`. It exits when its transport closes, so a
// crashed scheduler leaves no workers.

import { join } from 'node:path'
import { SpillwayError } from '../base/errors'
import { native } from '../native/binding'
import { SpillBuffer } from '../native/spill-buffer'
import { DataClient } from '../comm/data-client'
import { UNREADABLE_CODES } from '../wire/protocol'
import type { ReduceManyResult, Request, SchedulerToWorker, WorkerMetrics, WorkerStart, WorkerToScheduler } from '../wire/protocol'
import { ParentTransport, type Transport } from '../comm/transport'
import { errorPayload } from '../comm/rpc'
import { DataServer, type TransferCounts } from './data-server'
import { Inputs } from './inputs'
import { MemoryMonitor } from './memory-monitor'
import { SMALL_SHARE_OF_LIMIT as SMALL_SHARE, WorkerStore } from './store'
import { TaskRunner } from './task-runner'
import { SchedulerCalls } from './scheduler-calls'
import { SHARD_PART, ShuffleService } from './collections/shuffle/service'
import { BATCH_KEY, receiveBatch } from './collections/rechunk/batch'
import { acquire } from './acquire'
import { EXIT_RETIRED } from '../comm/join'
import { freeBytes } from './stuck'
import { orphanDir, removeIfOrphaned, STARTED_BY } from './orphan'

/** Share of a worker's limit that one input task's shards may have in flight (the shuffle's outgoing cap). */
const OUTGOING_SHARE = 0.05

interface Parts {
  config: WorkerStart
  buffer: WorkerStore
  monitor: MemoryMonitor
  runner: TaskRunner
  server: DataServer
  client: DataClient
  inputs: Inputs
  shuffle: ShuffleService
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

export class Worker {
  #parts: Parts | undefined
  readonly #timers: NodeJS.Timeout[] = []
  #metricsSentAt = 0
  readonly #transfer: TransferCounts = { incomingBytes: 0, incomingCount: 0, outgoingBytes: 0, outgoingCount: 0 }

  #exitCode = 0
  #closeAsked = false
  #orphanable = false
  readonly #calls: SchedulerCalls

  constructor(private readonly transport: Transport<SchedulerToWorker, WorkerToScheduler>) {
    // Only a channel to a parent process can be orphaned; a joined worker's scheduler is elsewhere.
    // A channel closed after the parent's own 'close' request comes from a
    // parent alive and cleaning up: one look, not a second of polling for a
    // re-parenting (a second per cluster closed, in every test and script).
    const orphanable = transport instanceof ParentTransport
    this.#orphanable = orphanable
    transport.onClose(() => void (orphanable ? removeIfOrphaned(this.#parts?.config.spillDir, this.#closeAsked ? 0 : undefined) : Promise.resolve()).finally(() => process.exit(this.#exitCode)))
    this.#calls = new SchedulerCalls(transport)
    // Its nanny's word that its lifetime is up: the scheduler moves its values elsewhere, then closes it.
    process.on('SIGUSR2', () => transport.send({ kind: 'retire', reason: 'its lifetime is up' }))
    transport.onMessage((m) => {
      if (m.kind === 'answer') return this.#calls.answered(m)
      const { id, request } = m
      this.handle(request).then(
        (result) => transport.send({ kind: 'reply', id, ok: true, result }),
        (e: any) => transport.send({ kind: 'reply', id, ok: false, error: errorPayload(e) }),
      )
    })
  }

  #warn = (message: string) => this.transport.send({ kind: 'log', level: 'warn', message })

  metrics(): WorkerMetrics {
    const p = this.#parts!
    const spill = p.buffer.metrics()
    return {
      ...spill,
      rss: process.memoryUsage.rss(),
      status: p.monitor.status,
      memoryLimit: p.config.memoryLimit,
      thresholds: { ...p.monitor.thresholds },
      taskCounts: { ...p.runner.counts },
      timings: { taskSeconds: p.runner.taskSeconds, pausedSeconds: p.monitor.pausedSeconds },
      transfer: { ...this.#transfer, incomingBytes: p.client.incomingBytes, incomingCount: p.client.incomingCount },
      stuck: p.monitor.stuck,
      spillFreeBytes: this.#spillFree(p, spill.spilledBytes.disk),
      shuffle: { ...p.shuffle.counts, heldShards: p.shuffle.heldShards },
      time: Date.now(),
    }
  }

  #free: { at: number; bytes: number | undefined } = { at: -Infinity, bytes: undefined }

  /**
   * The spill disk's free space, within what maxSpill leaves. At most one
   * statfs a second: metrics go out with results every few tens of ms.
   */
  #spillFree(p: Parts, spilled: number): number | undefined {
    const now = performance.now()
    if (now - this.#free.at >= 1000) this.#free = { at: now, bytes: freeBytes(p.buffer.dir) }
    const cap = p.buffer.buffer.maxSpill
    if (cap === null) return this.#free.bytes
    return Math.max(0, Math.min(this.#free.bytes ?? Infinity, cap - spilled))
  }

  #heartbeat = () => {
    if (this.#parts) this.transport.send({ kind: 'heartbeat', metrics: this.metrics() })
  }

  async #start(config: WorkerStart): Promise<{ pid: number; dataAddress: string }> {
    // A worker's chunks come and go under spill churn, where huge-page
    // faults wait for compaction (see core's pool.rs).
    native.setHugePages(false)
    // Dies with its parent even while a task holds the JavaScript thread (core's orphan.rs).
    if (this.#orphanable) native.watchParent(STARTED_BY, orphanDir(config.spillDir) ?? null)
    const spill = new SpillBuffer({
      // A name outlives its process (a restarted worker keeps it); its files do not.
      dir: join(config.spillDir, `${config.name}-${process.pid}`),
      memoryLimit: config.memoryLimit,
      target: config.thresholds.target,
      codec: config.codec,
      level: config.level,
      maxSpill: config.maxSpill ?? false,
    })
    const buffer = new WorkerStore(spill, Math.floor(config.memoryLimit * SMALL_SHARE))
    const secret = Buffer.from(config.secret, 'hex')
    const client = new DataClient(secret)
    const inputs = new Inputs(buffer, client, config.transferLimit)
    const monitor = new MemoryMonitor(
      buffer,
      config.memoryLimit,
      { ...config.thresholds },
      () => {
        this.#heartbeat()
        this.#parts?.runner.startReady()
      },
      this.#warn,
      {
        stuckTimeoutMs: config.stuckTimeoutMs,
        monitorMs: config.monitorMs,
        activity: () => this.#parts?.runner.counts ?? { executing: 0, done: 0, failed: 0 },
        log: (level, message) => this.transport.send({ kind: 'log', level, message }),
      },
    )
    let shuffle: ShuffleService | undefined
    const server = new DataServer({ forTransfer: (k) => buffer.getFrame(k), receive: (k, d) => (BATCH_KEY.test(k) ? receiveBatch(shuffle!, k, d) : shuffle!.receive(k, d)), receiveBatch: (k, d) => shuffle!.receiveBatch(k, d) }, secret, this.#transfer, this.#warn)
    const dataAddress = await server.start(config.dataAddress)
    const host = {
      store: buffer,
      client,
      memoryLimit: config.memoryLimit,
      address: dataAddress,
      name: config.name,
      status: () => monitor.status,
      checkSoon: () => monitor.checkSoon(),
      makeRoom: (bytes: number) => monitor.makeRoom(bytes),
      spillRoom: (bytes: number) => monitor.spillRoom(bytes),
    }
    shuffle = new ShuffleService(host, Math.max(SHARD_PART, Math.floor(config.memoryLimit * OUTGOING_SHARE)))
    // taskContext().worker: the address client.run, whoHas and `workers` take (a joined worker is known by its data address).
    const runner = new TaskRunner(config.nthreads, () => monitor.status, buffer, inputs, config.address || dataAddress, monitor, { shuffle, memoryLimit: config.memoryLimit }, this.#calls, config.importTimeoutMs)
    this.#parts = { config, buffer, monitor, runner, server, client, inputs, shuffle }
    this.#timers.push(setInterval(this.#heartbeat, config.heartbeatMs), setInterval(() => monitor.check(), config.monitorMs))
    return { pid: process.pid, dataAddress }
  }

  async handle(req: Request): Promise<unknown> {
    if (req.op === 'start') return this.#start(req.config)
    const p = this.#parts
    if (!p) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `worker got ${req.op} before start`, { op: req.op })
    switch (req.op) {
      case 'run': {
        const result = await p.runner.run(req.key, req.task, req.inputs)
        // Results carry metrics now and then, so the scheduler's peaks see
        // what lands between heartbeats.
        const now = Date.now()
        if (now - this.#metricsSentAt >= 50) {
          this.#metricsSentAt = now
          result.metrics = this.metrics()
        }
        return result
      }
      case 'put':
        await p.buffer.set(req.key, req.data)
        return { nbytes: req.data.byteLength }
      case 'cancel':
        p.runner.cancel(req.key)
        return {}
      case 'steal':
        // A run not started yet is skipped (and requeued by the scheduler); one running goes on.
        for (const k of req.keys) p.runner.release(k)
        return {}
      case 'reduce':
        return { partial: await p.buffer.reduce(req.key, req.dtype, req.reduceOp) }
      case 'reduce-many':
        return this.#reduceMany(p, req.keys, req.dtype, req.reduceOp)
      case 'shuffle-drop':
        p.shuffle.drop(req.shuffle)
        return { metrics: this.metrics() }
      case 'release':
        for (const k of req.keys) {
          p.buffer.delete(k)
          p.runner.release(k)
        }
        return { metrics: this.metrics() }
      case 'set-thresholds': {
        const next = { ...p.monitor.thresholds, ...req.thresholds }
        p.monitor.thresholds = next
        if (next.target !== p.buffer.target) await p.buffer.setTarget(next.target)
        p.monitor.check()
        return { metrics: this.metrics() }
      }
      case 'metrics':
        return { metrics: this.metrics() }
      case 'ping':
        return {}
      case 'acquire': {
        const host = { store: p.buffer, client: p.client, transferLimit: p.config.transferLimit, status: () => p.monitor.status, check: () => p.monitor.check(), spills: () => p.monitor.thresholds.target !== false || p.monitor.thresholds.spill !== false }
        return { ...(await acquire(host, req.from, req.keys)), metrics: this.metrics() }
      }
      case 'call':
        return p.runner.callOutside(req.func, req.args)
      case 'close': {
        this.#closeAsked = true
        p.monitor.status = 'closing'
        if (req.retired) this.#exitCode = EXIT_RETIRED
        for (const t of this.#timers) clearInterval(t)
        p.server.close()
        p.client.close()
        await p.buffer.close()
        setImmediate(() => this.transport.close())
        return { ok: true }
      }
    }
  }

  async #reduceMany(p: Parts, keys: string[], dtype: string, op: string): Promise<ReduceManyResult> {
    const m = p.buffer.metrics()
    const perRead = Math.ceil((m.managedBytes / Math.max(1, m.memoryCount + m.diskCount)) * 1.4)
    // One bad spill file must not fail the batch: the scheduler recomputes
    // that chunk and reduces the rest as they are.
    const unreadable: NonNullable<ReduceManyResult['unreadable']> = []
    const partials = await mapLimited(keys, p.config.nthreads + 1, async (k) => {
      p.monitor.transientBytes += perRead
      try {
        return await p.buffer.reduce(k, dtype, op)
      } catch (e: any) {
        if (!UNREADABLE_CODES.has(e?.code)) throw e
        unreadable.push({ key: k, code: e.code, message: String(e.message) })
        return null
      } finally {
        p.monitor.transientBytes -= perRead
      }
    })
    return { partials, unreadable }
  }
}
