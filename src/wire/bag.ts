// What a bag's tasks carry to the workers: where a partition's items come
// from, the per-item steps fused into its task, the reduction it ends
// with, and the P2P shuffle's split and collect (an input task splits its
// items into shards by output partition and pushes them to the worker that
// owns each output; an output task reads its own shards; shards are keyed
// by shuffle, output, input and part, so a shard sent twice is stored once).
// Plain data, checked on the client when the bag is built; the worker runs
// it (worker/collections/bag/partition.ts, worker/collections/shuffle/tasks.ts).

import type { FnDesc } from './functions'
import type { DecodeErrors } from './text-encoding'
import { keyText } from './key-equality'

/**
 * A file as it was when the bag was planned: one that is not the same
 * (another size, mtime, ctime or inode: replaced, rewritten in place even
 * with its mtime put back) fails its partition when read.
 */
export interface PlannedFile {
  path: string
  size: number
  mtimeMs: number
  ctimeMs?: number
  ino?: number
}

/** A byte range of a file: the lines that start in [start, end), Dask's read_block rule. */
export interface TextBlock extends PlannedFile {
  start: number
  end: number
}

/** A file's compression: gzip, zstd or LZ4 frames (native/file-codecs.ts), or none. */
export type Compression = 'gzip' | 'zstd' | 'lz4' | undefined

export type PartitionSource =
  /** `errors`: invalid bytes fail the partition unless 'replace' (wire/text-encoding.ts). */
  | { kind: 'text'; blocks: TextBlock[]; compression: Compression; encoding: BufferEncoding; delimiter: string; includePath: boolean; errors?: DecodeErrors }
  | { kind: 'items'; items: unknown[] }
  /**
   * CSV records: `header` (each file's first record, read when planned, null
   * for a column left out) names the fields of every block; `headerBytes` is
   * its length in the file. `quote` is there when not '"' ('' for none);
   * `cast` when numbers as written become numbers.
   */
  | { kind: 'csv'; blocks: TextBlock[]; header: (string | null)[][]; headerBytes: number[]; encoding: BufferEncoding; delimiter: string; quotedNewlines: boolean; errors?: DecodeErrors; quote?: string; cast?: boolean }
  /** Parquet rows [rowStart, rowEnd) of one file (whole row groups), as objects; `int64: 'bigint'` keeps INT64 values as bigints (else numbers, refused past 2^53). */
  | ({ kind: 'parquet'; rowStart: number; rowEnd: number; columns?: string[]; int64?: 'bigint' } & PlannedFile)
  /** An output of a P2P shuffle: its shards, read from this worker's store (the task's inputs are the splits' markers). */
  | { kind: 'shuffle'; collect: CollectSpec }
  /** The items of the task's inputs, concatenated in order (a repartition, a reduction's output bag). */
  | { kind: 'inputs' }

/** A function with its extra arguments (Futures among them, placed on the worker). */
export interface StepFn {
  fn: FnDesc
  args: unknown[]
  /** Calls whose promises may be pending at once in a partition (default 1); absent where not given, so keys stay as they were. */
  concurrency?: number
}

export type Step =
  | { op: 'map' | 'filter' | 'flatMap' | 'mapPartitions'; call: StepFn }
  | { op: 'pluck'; field: string | number }
  /**
   * A broadcast join: each item paired with the items of a small bag (one of
   * the task's trailing inputs, `input` counted among them) whose key is equal.
   */
  | { op: 'join-broadcast'; input: number; how: 'inner' | 'left'; leftKey: KeySpec; rightKey: KeySpec }
  /** Writes the partition's items as lines (or CSV records, with `csv`) to `pattern` with '*' as its index; yields the path. */
  | { op: 'write'; pattern: string; compression: Compression; csv?: CsvFormat; parquet?: ParquetFormat }

/** How toCsv writes records: `columns` (else the first record's keys), a header line, the delimiter. */
export interface CsvFormat {
  columns?: string[]
  header: boolean
  delimiter: string
}

/** How toParquet writes records: `columns` (else the first record's keys), the codec, rows per row group. */
export interface ParquetFormat {
  columns?: string[]
  codec: string
  rowGroupSize?: number
  /** Which of the task's trailing inputs is the write's unified column types (the parquetSchema reduction's value). */
  schemaInput: number
}

/** How a key is taken from an item: a function, or a field name. */
export type KeySpec = { fn: StepFn } | { field: string | number }

/** The built-in reductions, each a per-partition step and an aggregate. */
export type Reducer =
  | { op: 'count' | 'sum' | 'min' | 'max' | 'moments' | 'frequencies' | 'distinct' }
  | { op: 'topk'; k: number; key?: KeySpec }
  | { op: 'foldBy'; key: KeySpec; binop: StepFn; initial: unknown; hasInitial: boolean; combine?: StepFn; combineInitial: unknown; hasCombineInitial: boolean }
  | { op: 'custom'; perPartition: StepFn; aggregate: StepFn }
  /** toParquet's: each partition's column types (`columns`, else the first record's keys), unified across partitions. */
  | { op: 'parquetSchema'; columns?: string[] }
  /** Keys sampled from every partition; the result is `outputs - 1` boundaries that cut them into equal ranges (sortBy), in the sort's order (wire/order.ts). */
  | { op: 'sample'; key: KeySpec; outputs: number; descending?: boolean; nullsLast?: boolean }

export interface PartitionSpec {
  /** The partition's index in its bag (names its output file). */
  index: number
  /** Trailing inputs that are not the partition's items but a step's (a broadcast join's small side). */
  broadcast?: number
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

/** How an input task picks each item's output partition. */
export type Partitioner =
  /** A stable hash of the item's key. */
  | { kind: 'hash'; key: KeySpec }
  /** The pairs of a reduction's per-partition Map, by their keys (foldBy, frequencies, distinct with splitOut). */
  | { kind: 'hash-pairs' }
  /** Ranges of the key: output p takes keys before boundaries[p] in the sort's order; the boundaries are the task's last input (sortBy). */
  | { kind: 'range'; key: KeySpec; descending: boolean; nullsLast?: boolean }

export interface SplitSpec {
  partition: PartitionSpec
  shuffle: string
  npartitions: number
  by: Partitioner
  /** This input's number among all the shuffle's inputs (both sides of a join). */
  input: number
  /** Which side of a join the items are (0 left, 1 right); 0 otherwise. */
  side: number
  /** The data addresses of the outputs' owners: filled in by the scheduler as it sends the run (owners change when a worker is lost). */
  owners?: string[]
}

/** What an input task leaves behind: small, so a lost one is cheap to remember and to make again. */
export interface SplitMarker {
  key: string
  input: number
  side: number
  /** Shard parts sent to each output. */
  parts: number[]
  bytes: number
}

export type Collect =
  | { kind: 'items' }
  /** `maxGroupBytes`: a group past it fails by name (default half the worker's limit). */
  | { kind: 'groups'; key: KeySpec; maxGroupBytes?: number }
  | { kind: 'aggregate'; reduce: Reducer }
  | { kind: 'sorted'; key: KeySpec; descending: boolean; nullsLast?: boolean }
  | { kind: 'join'; how: 'inner' | 'left' | 'outer'; leftKey: KeySpec; rightKey: KeySpec }

export interface CollectSpec {
  shuffle: string
  output: number
  npartitions: number
  then: Collect
}

/** A shuffle's run: its id (a hash of its graph) and, after a run was dropped, the run's number. */
export const RUN_ID = /^[0-9a-f]{16}(?:e\d{1,6})?$/
export const SHARD_KEY = /^shuffle-([0-9a-f]{16}(?:e\d{1,6})?)-(\d+)-\d+-\d+$/

export function shardKey(shuffle: string, output: number, input: number, part: number): string {
  return `shuffle-${shuffle}-${output}-${input}-${part}`
}

/**
 * FNV-1a over a key's type and text: the same output for the same key on
 * every worker and run, and for keys equal by the rule of
 * wire/key-equality.ts (an array or object key by its canonical text).
 */
export function hashKey(k: unknown, role = 'key'): number {
  const t = typeof k
  // FNV-1a of the tag letter, then of the key's text: a string key is hashed where it lies, never copied into a tagged one.
  const tag = t === 'string' ? 's' : t === 'number' || t === 'bigint' || t === 'boolean' ? t[0] : k == null ? 'j' : 'o'
  const s = t === 'string' ? (k as string) : t === 'number' || t === 'bigint' || t === 'boolean' || k == null ? String(k) : keyText(k, role)
  let h = Math.imul(0x811c9dc5 ^ tag.charCodeAt(0), 0x01000193)
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}
