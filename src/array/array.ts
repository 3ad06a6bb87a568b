// A lazily defined chunked array: each chunk a task whose function is native.
// Persisting places the tasks on workers; reductions run where chunks live.

import { createHash } from 'node:crypto'
import { SpillwayError } from '../errors'
import type { TaskSubmission } from '../cluster/scheduler'
import { chunkLen, type Grid } from './grid'

export type Dtype = 'float64' | 'int64'
export type ReduceOp = 'sum' | 'mean' | 'min' | 'max' | 'var' | 'std' | 'count'

export interface ArraySource {
  kind: 'random' | 'randint'
  seed: number
  low?: number
  high?: number
}

/** What an array needs from the client it was persisted with. */
export interface ArrayOwner {
  waitFor(keys: string[]): Promise<void>
  release(keys: string[]): void
}

export class ChunkedArray {
  readonly name: string
  readonly dtype: Dtype
  #owner: ArrayOwner | undefined

  constructor(
    readonly grid: Grid,
    readonly source: ArraySource,
    owner?: ArrayOwner,
  ) {
    this.dtype = source.kind === 'random' ? 'float64' : 'int64'
    const token = createHash('sha256')
      .update(JSON.stringify([source, grid.shape, grid.chunks]))
      .digest('hex')
      .slice(0, 16)
    this.name = `${source.kind}-${token}`
    this.#owner = owner
  }

  get shape(): number[] {
    return this.grid.shape
  }

  get chunks(): number[] {
    return this.grid.chunks
  }

  get numblocks(): number[] {
    return this.grid.numblocks
  }

  get nchunks(): number {
    return this.grid.count
  }

  get size(): number {
    return this.grid.shape.reduce((a, b) => a * b, 1)
  }

  get nbytes(): number {
    return this.size * 8
  }

  get persisted(): boolean {
    return this.#owner !== undefined
  }

  keys(): string[] {
    return Array.from({ length: this.grid.count }, (_, i) => `${this.name}-${i}`)
  }

  /** The chunk tasks: generating chunk i is a pure function of (source, i). */
  tasks(): TaskSubmission[] {
    const { kind, seed, low, high } = this.source
    return this.keys().map((key, i) => {
      const len = chunkLen(this.grid, i)
      return { key, task: { fn: 'chunk' as const, spec: { kind, seed, chunkId: i, len, low, high } }, expectedBytes: len * 8 }
    })
  }

  /** This array, bound to the client that persisted it. */
  withOwner(owner: ArrayOwner): ChunkedArray {
    return new ChunkedArray(this.grid, this.source, owner)
  }

  /** Resolves when every chunk is held by a worker, in memory or on disk. */
  wait(): Promise<void> {
    if (!this.#owner) {
      return Promise.reject(new SpillwayError('ERR_SPILLWAY_NOT_PERSISTED', 'wait() needs a persisted array: use `await client.persist(array)` first'))
    }
    return this.#owner.waitFor(this.keys())
  }

  /** Frees the chunks on the workers. */
  release(): void {
    this.#owner?.release(this.keys())
  }

  sum(): Reduction {
    return new Reduction(this, 'sum')
  }
  mean(): Reduction {
    return new Reduction(this, 'mean')
  }
  min(): Reduction {
    return new Reduction(this, 'min')
  }
  max(): Reduction {
    return new Reduction(this, 'max')
  }
  var(): Reduction {
    return new Reduction(this, 'var')
  }
  std(): Reduction {
    return new Reduction(this, 'std')
  }
  count(): Reduction {
    return new Reduction(this, 'count')
  }
}

/** A whole-array reduction, computed by `client.compute`. */
export class Reduction {
  constructor(
    readonly array: ChunkedArray,
    readonly op: ReduceOp,
  ) {}
}
