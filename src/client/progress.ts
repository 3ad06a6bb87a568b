// Progress bars for long operations (persist, compute, the demo, the codec
// bench): tasks done / total and bytes spilled, drawn with cli-progress on a
// terminal and silent otherwise, so piped output and logs stay clean.

import type { Future } from '../futures/future'
import { Presets, SingleBar } from 'cli-progress'
import type { ChunkedArray } from '../array/array'
import type { Scheduler } from '../scheduler/scheduler'
import { ConfigError, intervalProblem } from '../base/errors'
import { workerSpillBytes } from '../wire/metrics'

/** A stream the bar can draw on; only `isTTY` streams get a bar. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean }

export interface ProgressBarOptions {
  /** Words before the bar, e.g. 'persist'. */
  label?: string
  /** What the counted items are ('tasks' unless told). */
  unit?: string
  /** Where to draw; process.stderr unless told (stdout stays for results). */
  stream?: ProgressStream
  /**
   * false: never draw. true or unset: draw when the stream is a TTY (and, for
   * the default stream, stdout is a TTY too, so `cmd > file` stays quiet).
   */
  enabled?: boolean
  /** Remove the bar once stopped (default true), so later output starts clean. */
  clear?: boolean
}

/** Whether a bar would be drawn for these options. */
export function progressEnabled(options: Pick<ProgressBarOptions, 'stream' | 'enabled'> = {}): boolean {
  if (options.enabled === false) return false
  if (process.env.SPILLWAY_NO_PROGRESS) return false
  if (options.stream) return options.stream.isTTY === true
  return process.stderr.isTTY === true && process.stdout.isTTY === true
}

function gib(bytes: number): string {
  return (bytes / 2 ** 30).toFixed(2)
}

/** A bar, or a no-op with the same methods when it is not to be drawn. */
export class ProgressBar {
  readonly active: boolean
  #bar: SingleBar | undefined
  #total: number
  #value = 0
  #spilled: number | undefined

  constructor(total: number, options: ProgressBarOptions = {}) {
    this.#total = total
    this.active = progressEnabled(options)
    if (!this.active) return
    const unit = options.unit ?? 'tasks'
    this.#bar = new SingleBar(
      {
        stream: options.stream ?? process.stderr,
        format: `${options.label ? `${options.label} ` : ''}[{bar}] {value}/{total} ${unit}{spill} | {duration_formatted}`,
        barsize: 30,
        hideCursor: true,
        clearOnComplete: options.clear ?? true,
        stopOnComplete: false,
        fps: 8,
        // Redraw only when drawn on a terminal; never print a bar into a file.
        noTTYOutput: false,
      },
      Presets.shades_classic,
    )
    this.#bar.start(total, 0, { spill: '' })
  }

  get value(): number {
    return this.#value
  }

  get total(): number {
    return this.#total
  }

  /** Sets tasks done (and, when known, bytes spilled to disk). */
  update(done: number, spilledBytes?: number, total?: number): void {
    this.#value = done
    if (spilledBytes !== undefined) this.#spilled = spilledBytes
    if (total !== undefined && total !== this.#total) {
      this.#total = total
      this.#bar?.setTotal(total)
    }
    this.#bar?.update(done, { spill: this.#spilled === undefined ? '' : ` | spilled ${gib(this.#spilled)} GiB` })
  }

  increment(by = 1, spilledBytes?: number): void {
    this.update(this.#value + by, spilledBytes)
  }

  stop(): void {
    if (!this.#bar) return
    const bar = this.#bar
    this.#bar = undefined
    bar.stop()
  }
}

/** What progress bars read of their client (declared here, so the client and this file do not import each other). */
export interface ProgressHost {
  readonly scheduler: Pick<Scheduler, 'tasks' | 'workers'>
  readonly silenceLogs?: boolean
}

export interface WithProgressOptions extends ProgressBarOptions {
  /** How often the scheduler's task states are read, in ms (default 150). */
  intervalMs?: number
}

/** Tasks done / total for `keys`, from the scheduler's task records. */
export function taskProgress(client: ProgressHost, keys: readonly string[], seen: Set<string> = new Set()): { done: number; total: number; spilledBytes: number } {
  const tasks = client.scheduler.tasks
  let done = 0
  for (const k of keys) {
    const t = tasks.get(k)
    if (t) {
      seen.add(k)
      if (t.state === 'memory') done++
    } else if (seen.has(k)) {
      // Released after being reduced (an array that was never persisted).
      done++
    }
  }
  let spilledBytes = 0
  for (const w of client.scheduler.workers.values()) spilledBytes += workerSpillBytes(w.metrics)
  return { done, total: keys.length, spilledBytes }
}

/**
 * Runs `work` with a bar of the tasks of `target` (an array, its keys, or
 * Futures) done out of total, and the bytes the workers have spilled to disk.
 * The bar is drawn only on a terminal, and never for a client made with
 * `silenceLogs`; the result (or error) of `work` is passed through unchanged.
 *
 *   const x = await client.persist(random.random([20_000, 20_000], { chunks: 2_000 }))
 *   await withProgress(client, x, () => x.wait(), { label: 'persist' })
 */
export async function withProgress<T>(
  client: ProgressHost,
  target: ChunkedArray | readonly string[] | readonly Future[],
  work: Promise<T> | (() => Promise<T> | T),
  options: WithProgressOptions = {},
): Promise<T> {
  const interval = options.intervalMs ?? 150
  const bad = intervalProblem(interval, 150)
  if (bad) throw new ConfigError([bad], 'withProgress options')
  const keys = Array.isArray(target) ? target.map((k: string | Future) => (typeof k === 'string' ? k : k.key)) : (target as ChunkedArray).keys()
  const bar = new ProgressBar(keys.length, client.silenceLogs ? { ...options, enabled: false } : options)
  if (!bar.active) return typeof work === 'function' ? await work() : await work
  const seen = new Set<string>()
  const poll = () => {
    const p = taskProgress(client, keys, seen)
    bar.update(p.done, p.spilledBytes)
  }
  poll()
  const timer = setInterval(poll, interval)
  timer.unref()
  try {
    return typeof work === 'function' ? await work() : await work
  } finally {
    clearInterval(timer)
    poll()
    bar.stop()
  }
}

/** Options of `persist` and `compute`. */
export interface ProgressOption {
  /**
   * Show a progress bar (chunk tasks done / total, bytes spilled) on a
   * terminal; nothing is drawn when output is not a TTY or logs are silenced.
   */
  progress?: boolean
  /** Aborting it rejects the call with the signal's reason and lets go of every task, value and shard the call made. */
  signal?: AbortSignal
}
