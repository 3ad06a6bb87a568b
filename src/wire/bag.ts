// What a bag's tasks carry to the workers: where a partition's items come
// from, the per-item steps fused into its task, and the reduction it ends
// with. Plain data, checked on the client when the bag is built; the worker
// runs it (worker/bag-partition.ts).

import type { FnDesc } from './functions'

/** A byte range of a file: the lines that start in [start, end), Dask's read_block rule. */
export interface TextBlock {
  path: string
  start: number
  end: number
  /** The file's size and mtime when planned: a file that changed since fails its partition. */
  size: number
  mtimeMs: number
}

export type Compression = 'gzip' | undefined

export type PartitionSource =
  | { kind: 'text'; blocks: TextBlock[]; compression: Compression; encoding: BufferEncoding; delimiter: string; includePath: boolean }
  | { kind: 'items'; items: unknown[] }
  /** CSV records: `header` (each file's first line, read when planned) names the fields of every block. */
  | { kind: 'csv'; blocks: TextBlock[]; header: string[][]; encoding: BufferEncoding; delimiter: string; quotedNewlines: boolean }
  /** Parquet rows [rowStart, rowEnd) of one file (whole row groups), as objects. */
  | { kind: 'parquet'; path: string; size: number; mtimeMs: number; rowStart: number; rowEnd: number; columns?: string[] }
  /** The items of the task's inputs, concatenated in order (a repartition, a reduction's output bag). */
  | { kind: 'inputs' }

/** A function with its extra arguments (Futures among them, placed on the worker). */
export interface StepFn {
  fn: FnDesc
  args: unknown[]
}

export type Step =
  | { op: 'map' | 'filter' | 'flatMap' | 'mapPartitions'; call: StepFn }
  | { op: 'pluck'; field: string | number }
  /** Writes the partition's items as lines to `pattern` with '*' as its index; yields the path. */
  | { op: 'write'; pattern: string; compression: Compression }

/** How a key is taken from an item: a function, or a field name. */
export type KeySpec = { fn: StepFn } | { field: string | number }

/** The built-in reductions, each a per-partition step and an aggregate. */
export type Reducer =
  | { op: 'count' | 'sum' | 'min' | 'max' | 'moments' | 'frequencies' | 'distinct' }
  | { op: 'topk'; k: number; key?: KeySpec }
  | { op: 'foldBy'; key: KeySpec; binop: StepFn; initial: unknown; hasInitial: boolean; combine?: StepFn; combineInitial: unknown; hasCombineInitial: boolean }
  | { op: 'custom'; perPartition: StepFn; aggregate: StepFn }

export interface PartitionSpec {
  /** The partition's index in its bag (names its output file). */
  index: number
  source: PartitionSource
  steps: Step[]
  /** Ends with a reduction's per-partition step: the task's value is its partial. */
  reduce?: Reducer
}

export interface AggregateSpec {
  reduce: Reducer
  /** The last level: its value is the reduction's result, not a partial. */
  final: boolean
}
