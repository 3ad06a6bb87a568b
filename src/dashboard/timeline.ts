// The cluster's memory and spill over time, sampled from the scheduler's
// latest heartbeats (never an RPC: a dashboard must not load the workers)
// into a bounded ring buffer, so a long run costs a fixed amount of memory.

import type { Scheduler } from '../scheduler/scheduler'
import { ConfigError, intervalProblem, type ConfigProblem } from '../base/errors'
import { workerInMemoryBytes, workerSpillBytes } from '../reporting/workers'

export interface WorkerSample {
  /** Managed bytes held in memory. */
  memoryBytes: number
  /** Spilled bytes on disk, after compression. */
  spillBytes: number
  rss: number
}

export interface TimelineSample {
  /** Milliseconds since the epoch. */
  time: number
  /** Seconds since the sampler started. */
  t: number
  workers: number
  memoryBytes: number
  spillBytes: number
  rssBytes: number
  perWorker: Record<string, WorkerSample>
}

export interface TimelineJSON {
  intervalMs: number
  capacity: number
  startedAt: number
  points: TimelineSample[]
}

function capacityProblem(capacity: unknown): ConfigProblem | undefined {
  // The upper bound is the longest array JS can allocate.
  if (Number.isInteger(capacity) && (capacity as number) >= 1 && (capacity as number) <= 2 ** 32 - 1) return undefined
  return { field: 'capacity', value: capacity, allowed: 'an integer number of samples from 1 to 4294967295' }
}

/** A fixed-capacity FIFO: pushing past capacity drops the oldest item. */
export class RingBuffer<T> {
  readonly #items: (T | undefined)[]
  #head = 0
  #size = 0

  constructor(readonly capacity: number) {
    const problem = capacityProblem(capacity)
    if (problem) throw new ConfigError([problem], 'RingBuffer arguments')
    this.#items = new Array(capacity)
  }

  get size(): number {
    return this.#size
  }

  push(item: T): void {
    this.#items[(this.#head + this.#size) % this.capacity] = item
    if (this.#size < this.capacity) this.#size++
    else this.#head = (this.#head + 1) % this.capacity
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = new Array(this.#size)
    for (let i = 0; i < this.#size; i++) out[i] = this.#items[(this.#head + i) % this.capacity]!
    return out
  }

  last(): T | undefined {
    return this.#size ? this.#items[(this.#head + this.#size - 1) % this.capacity] : undefined
  }
}

/** What the scheduler holds now, summed over its live workers. */
export function sampleScheduler(scheduler: Scheduler, startedAt: number, now = Date.now()): TimelineSample {
  const perWorker: Record<string, WorkerSample> = {}
  let memoryBytes = 0
  let spillBytes = 0
  let rssBytes = 0
  for (const [address, w] of scheduler.workers) {
    const s = { memoryBytes: workerInMemoryBytes(w.metrics), spillBytes: workerSpillBytes(w.metrics), rss: w.metrics?.rss ?? 0 }
    perWorker[address] = s
    memoryBytes += s.memoryBytes
    spillBytes += s.spillBytes
    rssBytes += s.rss
  }
  return { time: now, t: (now - startedAt) / 1000, workers: scheduler.workers.size, memoryBytes, spillBytes, rssBytes, perWorker }
}

export interface TimelineOptions {
  /** Milliseconds between samples, ≥ 1; default 500. */
  intervalMs?: number
  /** Samples kept; 3600 at 500 ms is the last 30 minutes. */
  capacity?: number
}

export class TimelineSampler {
  readonly intervalMs: number
  readonly startedAt = Date.now()
  readonly #ring: RingBuffer<TimelineSample>
  readonly #listeners = new Set<(s: TimelineSample) => void>()
  #timer: NodeJS.Timeout | undefined

  constructor(
    private readonly scheduler: Scheduler,
    options: TimelineOptions = {},
  ) {
    const intervalMs = options.intervalMs ?? 500
    const capacity = options.capacity ?? 3600
    const problems = [intervalProblem(intervalMs, 500), capacityProblem(capacity)].filter((p): p is ConfigProblem => p !== undefined)
    if (problems.length) throw new ConfigError(problems, 'dashboard timeline options')
    this.intervalMs = intervalMs
    this.#ring = new RingBuffer(capacity)
  }

  get running(): boolean {
    return this.#timer !== undefined
  }

  start(): void {
    if (this.#timer) return
    this.sample()
    this.#timer = setInterval(() => this.sample(), this.intervalMs)
    // The dashboard must never be what keeps a finished script alive.
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#listeners.clear()
  }

  sample(): TimelineSample {
    const s = sampleScheduler(this.scheduler, this.startedAt)
    this.#ring.push(s)
    for (const fn of this.#listeners) fn(s)
    return s
  }

  /** Called after every sample; returns the unsubscribe function. */
  onSample(fn: (s: TimelineSample) => void): () => void {
    this.#listeners.add(fn)
    return () => this.#listeners.delete(fn)
  }

  latest(): TimelineSample | undefined {
    return this.#ring.last()
  }

  toJSON(): TimelineJSON {
    return { intervalMs: this.intervalMs, capacity: this.#ring.capacity, startedAt: this.startedAt, points: this.#ring.toArray() }
  }
}
