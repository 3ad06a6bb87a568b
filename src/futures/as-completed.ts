// Dask's as_completed: Futures in the order they finish, fail or are
// cancelled. More may be added while it is iterated; iteration ends once
// every Future added has been yielded. With `withResults` each comes with
// its value, fetched as it completes, and a failed one throws its error at
// its turn (Dask's raise_errors); the iteration may go on after it.

import { Future } from './future'
import { futuresOf } from './wait'

export interface AsCompletedOptions<W extends boolean = boolean> {
  /** Yield `[future, value]`; a failed Future throws its error at its turn. Default false. */
  withResults?: W
}

type ValueOf<F> = F extends Future<infer T> ? T : never

/** What is yielded: the Future, or `[future, value]` with `withResults: true`. */
export type Completed<F extends Future<any>, W extends boolean> = W extends true ? [F, ValueOf<F>] : F

type Entry<F> = { future: F; value?: unknown; error?: unknown; failed: boolean }

export class AsCompleted<F extends Future<any> = Future, W extends boolean = false> implements AsyncIterableIterator<Completed<F, W>> {
  readonly #withResults: boolean
  readonly #ready: Entry<F>[] = []
  /** Added, not yet yielded (done or not): Dask's count(). */
  #count = 0
  #wake = new Set<() => void>()

  constructor(futures: F | Iterable<F> = [], options: AsCompletedOptions<W> = {}) {
    this.#withResults = options.withResults === true
    this.update(futures)
  }

  /** Adds a Future: it is yielded once done (at once if it already is). */
  add(future: F): void {
    this.update([future])
  }

  /** Adds Futures, as add() each. */
  update(futures: F | Iterable<F>): void {
    const list = futuresOf(futures, 'asCompleted arguments') as F[]
    for (const f of list) {
      this.#count++
      const done = (e: Entry<F>) => {
        this.#ready.push(e)
        for (const wake of this.#wake) wake()
        this.#wake.clear()
      }
      if (this.#withResults) {
        f.result().then(
          (value) => done({ future: f, value, failed: false }),
          (error) => done({ future: f, error, failed: true }),
        )
      } else f.settled().then(() => done({ future: f, failed: false }), () => done({ future: f, failed: false }))
    }
  }

  /** Futures added and not yet yielded. */
  count(): number {
    return this.#count
  }

  isEmpty(): boolean {
    return this.#count === 0
  }

  /** Resolves once something is ready or nothing is left to wait for. */
  async #anyReady(): Promise<boolean> {
    while (!this.#ready.length) {
      if (this.#count === 0) return false
      await new Promise<void>((r) => this.#wake.add(r))
    }
    return true
  }

  #yielded(e: Entry<F>): Completed<F, W> {
    return (this.#withResults ? [e.future, e.value] : e.future) as Completed<F, W>
  }

  async next(): Promise<IteratorResult<Completed<F, W>, undefined>> {
    if (!(await this.#anyReady())) return { done: true, value: undefined }
    const e = this.#ready.shift()!
    this.#count--
    if (e.failed) throw e.error
    return { done: false, value: this.#yielded(e) }
  }

  async return(): Promise<IteratorResult<Completed<F, W>, undefined>> {
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  /** Everything completed since the last batch, as one array each time (at least one). */
  async *batches(): AsyncGenerator<Completed<F, W>[], void, undefined> {
    while (await this.#anyReady()) {
      const batch = this.#ready.splice(0)
      this.#count -= batch.length
      // As Dask's: a failed Future throws, and the batch it was in is gone with it.
      const failed = batch.find((e) => e.failed)
      if (failed) throw failed.error
      yield batch.map((e) => this.#yielded(e))
    }
  }
}

/** Yields each Future as it finishes, fails or is cancelled (an AsCompleted: add() more while iterating). */
export function asCompleted<F extends Future<any>, W extends boolean = false>(futures: F | Iterable<F>, options?: AsCompletedOptions<W>): AsCompleted<F, W> {
  return new AsCompleted<F, W>(futures, options)
}
