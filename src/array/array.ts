// A lazily defined chunked array: each chunk a task whose function is native.
// Persisting places the tasks on workers; reductions run where chunks live.

import { createHash } from 'node:crypto'
import { SpillwayError } from '../base/errors'
import type { TaskSubmission } from '../scheduler/scheduler'
import { ArgumentError } from '../base/errors'
import { describeFunction, functionLabel, type FnDesc, type TaskFunction } from '../wire/functions'
import { chunkLen, gridProblems, makeGrid, type Grid } from './grid'
import { rechunkTasks } from './rechunk'

export type Dtype = 'float64' | 'int64'
export type ReduceOp = 'sum' | 'mean' | 'min' | 'max' | 'var' | 'std' | 'count'

export interface ArraySource {
  kind: 'random' | 'randint'
  seed: number
  low?: number
  high?: number
}

/** Chunk i is `func(chunk i of parent)`, of `dtype`. */
export interface MapSource {
  kind: 'map'
  parent: ChunkedArray
  func: FnDesc
  dtype: Dtype
}

/** The parent's values on a new chunk grid, through a P2P shuffle. */
export interface RechunkSource {
  kind: 'rechunk'
  parent: ChunkedArray
}

const DTYPES: readonly Dtype[] = ['float64', 'int64']

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
    readonly source: ArraySource | MapSource | RechunkSource,
    owner?: ArrayOwner,
  ) {
    const hash = createHash('sha256')
    if (source.kind === 'rechunk') {
      this.dtype = source.parent.dtype
      hash.update(JSON.stringify(['rechunk', source.parent.name, grid.chunks]))
      this.name = `rechunk-${hash.digest('hex').slice(0, 16)}`
    } else if (source.kind === 'map') {
      this.dtype = source.dtype
      hash.update(JSON.stringify([source.parent.name, source.func.id, source.dtype]))
      this.name = `${functionLabel(source.func)}-${hash.digest('hex').slice(0, 16)}`
    } else {
      this.dtype = source.kind === 'random' ? 'float64' : 'int64'
      hash.update(JSON.stringify([source, grid.shape, grid.chunks]))
      this.name = `${source.kind}-${hash.digest('hex').slice(0, 16)}`
    }
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

  /**
   * How many tasks `tasks()` makes, from the chunk grids alone: the client
   * refuses a graph past maxGraphTasks before making any.
   */
  taskCount(): number {
    const source = this.source
    if (source.kind === 'rechunk') return source.parent.taskCount() + source.parent.grid.count + this.grid.count
    if (source.kind === 'map') return source.parent.taskCount() + this.grid.count
    return this.grid.count
  }

  keys(): string[] {
    return Array.from({ length: this.grid.count }, (_, i) => `${this.name}-${i}`)
  }

  /**
   * The chunk tasks, inputs first: generating chunk i is a pure function of
   * (source, i); a mapped chunk is its function of the parent's chunk i. The
   * parent's chunks are not held for their own sake (`hold: false`).
   */
  tasks(): TaskSubmission[] {
    const source = this.source
    if (source.kind === 'rechunk') {
      const parent = source.parent
      // The name ends in the shuffle's id: 16 hex digits of its hash.
      return rechunkTasks({ name: this.name, shuffle: this.name.slice(-16), from: parent.grid, to: this.grid, dtype: this.dtype, parentKeys: parent.keys(), parentTasks: () => parent.tasks() })
    }
    if (source.kind === 'map') {
      const parent = source.parent
      const parentKeys = parent.keys()
      const inputs: TaskSubmission[] = parent.tasks().map((t) => ({ ...t, hold: false }))
      return inputs.concat(
        this.keys().map((key, i) => ({
          key,
          task: { fn: 'call' as const, func: source.func, args: [null], deps: [{ key: parentKeys[i], path: [0] }], dtype: this.dtype },
          expectedBytes: chunkLen(this.grid, i) * 8,
          deps: [parentKeys[i]],
          format: `raw:${this.dtype}` as const,
          group: functionLabel(source.func),
        })),
      )
    }
    const { kind, seed, low, high } = source
    return this.keys().map((key, i) => {
      const len = chunkLen(this.grid, i)
      return { key, task: { fn: 'chunk' as const, spec: { kind, seed, chunkId: i, len, low, high } }, expectedBytes: len * 8, format: `raw:${this.dtype}` as const }
    })
  }

  /**
   * An array whose chunk i is `fn(chunk i)`, computed on the worker that
   * holds chunk i. `fn` gets the chunk as a Float64Array (BigInt64Array for
   * int64) and returns a TypedArray of `dtype` with the same length.
   */
  mapBlocks(fn: TaskFunction, options: { dtype?: Dtype } = {}): ChunkedArray {
    const func = describeFunction(fn)
    const dtype = options?.dtype ?? this.dtype
    if (!DTYPES.includes(dtype)) throw new ArgumentError([{ field: 'options.dtype', value: dtype, allowed: DTYPES.map((d) => `'${d}'`).join(' or ') }], 'mapBlocks options')
    return new ChunkedArray(this.grid, { kind: 'map', parent: this, func, dtype })
  }

  /**
   * The same values on a new chunk grid (Dask's rechunk, on the P2P
   * shuffle): `chunks` is a chunk size for every dimension or one per
   * dimension; edge chunks may be smaller. Each old chunk is cut on the
   * worker that holds it and its pieces pushed to the owners of the new
   * chunks, which assemble them as raw chunks the reductions read.
   */
  rechunk(chunks: number | number[]): ChunkedArray {
    // Unlike at creation, no chunks is no default here: rechunk to what?
    const problems = chunks === undefined ? [{ field: 'chunks', value: chunks, allowed: 'a positive integer, or one per dimension' }] : gridProblems(this.shape, chunks)
    if (problems.length) throw new ArgumentError(problems, 'rechunk arguments')
    const grid = makeGrid(this.shape, chunks, 'rechunk')
    if (grid.chunks.every((n, d) => n === this.grid.chunks[d])) return this
    return new ChunkedArray(grid, { kind: 'rechunk', parent: this })
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
