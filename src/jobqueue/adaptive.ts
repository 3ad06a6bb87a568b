// adapt(): the number of workers follows the work. Work waiting for a worker
// (queued, or running with more queued behind it) asks for more, up to
// `maximum`; a cluster with nothing to do for `waitCount` checks in a row
// shrinks to `minimum`. Workers of jobs still queued in the batch system
// count as coming, so a slow queue does not make it submit again and again.

import { stderrLogger } from '../base/logger'
import { ConfigError } from '../base/errors'
import type { Scheduler } from '../scheduler/scheduler'

export interface AdaptOptions {
  minimum?: number
  maximum?: number
  /** Milliseconds between checks; default 1000. */
  interval?: number
  /** Checks in a row that must want fewer workers before any go (Dask's wait_count); default 3. */
  waitCount?: number
}

export class Adaptive {
  readonly #timer: NodeJS.Timeout
  #fewer = 0
  #busy = false

  constructor(
    private readonly scheduler: Scheduler,
    options: AdaptOptions,
    /** Workers asked for so far (running and queued jobs). */
    private readonly planned: () => number,
    private readonly scale: (n: number) => Promise<void>,
    private readonly warn: (message: string) => void = (m) => stderrLogger.warn(m),
  ) {
    const { minimum = 0, maximum = Infinity, interval = 1000, waitCount = 3 } = options
    const problems = []
    if (!(Number.isInteger(minimum) && minimum >= 0)) problems.push({ field: 'minimum', value: minimum, allowed: 'an integer ≥ 0' })
    if (!(maximum === Infinity || (Number.isInteger(maximum) && maximum >= minimum))) problems.push({ field: 'maximum', value: maximum, allowed: `an integer ≥ minimum (${minimum})` })
    if (!(interval >= 10)) problems.push({ field: 'interval', value: interval, allowed: 'milliseconds ≥ 10' })
    if (!(Number.isInteger(waitCount) && waitCount >= 1)) problems.push({ field: 'waitCount', value: waitCount, allowed: 'an integer ≥ 1' })
    if (problems.length) throw new ConfigError(problems, 'adapt options')
    this.#timer = setInterval(() => void this.#check(minimum, maximum, waitCount), interval)
    this.#timer.unref()
    void this.#check(minimum, maximum, waitCount)
  }

  /** Workers the work in the scheduler asks for now. */
  desired(minimum: number, maximum: number): number {
    let demand = 0
    for (const t of this.scheduler.tasks.values()) if (t.state === 'queued' || t.state === 'processing' || t.state === 'waiting') demand++
    let threads = 1
    for (const w of this.scheduler.workers.values()) threads = Math.max(threads, w.nthreads)
    return Math.min(maximum, Math.max(minimum, Math.ceil(demand / threads)))
  }

  async #check(minimum: number, maximum: number, waitCount: number): Promise<void> {
    if (this.#busy) return
    this.#busy = true
    try {
      const want = this.desired(minimum, maximum)
      const have = this.planned()
      if (want > have) {
        this.#fewer = 0
        await this.scale(want)
      } else if (want < have) {
        if (++this.#fewer >= waitCount) {
          this.#fewer = 0
          await this.scale(want)
        }
      } else this.#fewer = 0
    } catch (e: any) {
      this.warn(`adapt: ${e.message}`)
    } finally {
      this.#busy = false
    }
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
