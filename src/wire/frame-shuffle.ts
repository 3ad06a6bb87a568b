// The frame shuffle's task plans as they travel to a worker and into the
// core (crates/core/src/frame/shuffle.rs): a split per input partition
// (its rows cut by key hash or by sorted range into IPC shards, which the
// bags' shuffle service moves), a collect per output (its shards
// concatenated, joined or sorted), and a sortBy's samples and boundaries.

import type { AggSpecData, FieldSpec, PartitionPlan, SortKeyData } from './frame'

export type { SortKeyData } from './frame'

export type FrameBy = { kind: 'hash'; keys: string[] } | { kind: 'range'; keys: SortKeyData[] }

export type JoinHow = 'inner' | 'left' | 'right' | 'outer' | 'semi' | 'anti'

/** An output column of a join: one side's column, or a key both share (`on`), from whichever side the row has. */
export type JoinColumn = { from: 'left' | 'right'; column: string; name: string } | { from: 'key'; left: string; right: string; name: string }

export interface JoinSpecData {
  leftOn: string[]
  rightOn: string[]
  how: JoinHow
  columns: JoinColumn[]
}

export type FrameThen = { kind: 'concat' } | { kind: 'join'; join: JoinSpecData } | { kind: 'sort'; keys: SortKeyData[] } | { kind: 'agg'; agg: AggSpecData }

/** A groupBy's split (crates/core/src/frame/agg_shuffle.rs): partial states cut by key hash, or the rows where keys barely repeat. */
export interface AggSplitData {
  agg: AggSpecData
  /** Groups per row over the first `probeRows` rows above which the split sends rows, not states. */
  skipRatio: number
  probeRows: number
}

/** A `frame.split` task's spec: `shuffle`, `npartitions` and `owners` as the scheduler's shuffle coordinator reads them. */
export interface FrameSplitSpec {
  shuffle: string
  npartitions: number
  input: number
  side: number
  plan: { partition: PartitionPlan; by: FrameBy; npartitions: number; partBytes: number; agg?: AggSplitData }
  /** The data addresses of the outputs' owners: filled in by the scheduler as it sends the run. */
  owners?: string[]
}

/** A `frame.collect` task's spec (its inputs are the markers of the splits). */
export interface FrameCollectSpec {
  shuffle: string
  output: number
  npartitions: number
  then: FrameThen
  /** Each side's columns, for an output that no input sent rows. */
  schemas: FieldSpec[][]
}

/**
 * A `frame.join` task's plan (a broadcast join): its inputs are the large
 * side's partition's (`partitionInputs` of them, read by `partition`), then
 * every partition of the small side.
 */
export interface FrameJoinPlan {
  partition: PartitionPlan
  partitionInputs: number
  join: JoinSpecData
  small: 'left' | 'right'
  smallSchema: FieldSpec[]
}

export interface FrameSamplePlan {
  partition: PartitionPlan
  keys: SortKeyData[]
  per: number
}

export interface FrameBoundariesPlan {
  keys: SortKeyData[]
  npartitions: number
}
