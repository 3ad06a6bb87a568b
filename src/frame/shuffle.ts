// A frame regrouped across the workers: one split task per input partition
// (the core runs the partition and cuts its rows by key hash or sorted
// range into Arrow IPC shards, which the bags' P2P shuffle service moves,
// batched per destination worker) and one collect task per output (the
// core concatenates, joins or sorts that output's shards). Each output is a
// partition of the new frame, in order.

import type { TaskSubmission } from '../scheduler/scheduler'
import { SpillwayError } from '../base/errors'
import { hashOf } from '../bag/graph'
import { upstreamOf, type Upstream } from '../bag/upstream'
import type { FieldSpec, PartitionPlan } from '../wire/frame'
import type { AggSplitData, FrameBy, FrameCollectSpec, FrameSplitSpec, FrameThen } from '../wire/frame-shuffle'
import { nativeFunction } from '../wire/functions'
import type { Frame, FramePart } from './frame'

/** Bytes of one shard part at most, as the bags' shards (SHARD_PART): a message stays well under the data socket's cap. */
const PART_BYTES = 8 * 2 ** 20

/**
 * Links (an output's collect reading one input's split) a shuffle may make.
 * Each costs the client and the scheduler about 200 bytes (the collect's
 * inputs, the split's dependents): 5 695 partitions into as many outputs
 * were 32 M links, and ran the client out of its heap while the graph was
 * still being built. 2 M is about 400 MB.
 */
export const MAX_SHUFFLE_LINKS = 2_000_000

/** The most outputs a shuffle of `inputs` partitions may have (MAX_SHUFFLE_LINKS), at least one. */
export const maxOutputsFor = (inputs: number): number => Math.max(1, Math.floor(MAX_SHUFFLE_LINKS / Math.max(1, inputs)))

/** A native task over a plan and the values of `inputs` (as frame.partition's). */
export function planTask(op: string, key: string, group: string, plan: unknown, inputs: string[]): TaskSubmission {
  const deps = inputs.map((k, j) => ({ key: k, path: [1 + j] }))
  return { key, task: { fn: 'call', func: nativeFunction(op, group), args: [plan, ...inputs.map(() => null)], deps }, expectedBytes: 1, deps: [...new Set(inputs)], group, hold: false }
}

/** Partition `p` of `f`'s plan: its source and the steps piled on it. */
export function partPlan(f: Frame, p: FramePart): PartitionPlan {
  return { source: p.source, schema: [...f.sourceFields], steps: [...f.steps] }
}

export interface FrameShuffleSide {
  frame: Frame
  by: FrameBy
  /** A groupBy's: each split aggregates its partition and cuts the states (or rows). */
  agg?: AggSplitData
}

export interface FrameShuffled {
  /** The output partitions' keys, in order. */
  keys: string[]
  upstream: Upstream
}

/**
 * The outputs of a shuffle of `sides` into `npartitions`, each made by
 * `then`. `boundaries` is the task whose value each range split reads last.
 */
export function frameShuffled(label: string, sides: FrameShuffleSide[], npartitions: number, then: FrameThen, boundaries?: { key: string; tasks: Upstream }): FrameShuffled {
  const inputs = sides.reduce((n, s) => n + s.frame.npartitions, 0)
  if (inputs * npartitions > MAX_SHUFFLE_LINKS) {
    const most = maxOutputsFor(inputs)
    throw new SpillwayError(
      'ERR_SPILLWAY_GRAPH_TOO_LARGE',
      `the ${label}'s shuffle of ${inputs.toLocaleString('en-US')} partitions into ${npartitions.toLocaleString('en-US')} would link every input to every output: ${(inputs * npartitions).toLocaleString('en-US')} links, past the ${MAX_SHUFFLE_LINKS.toLocaleString('en-US')} a client can plan in bounded memory. Ask for at most ${most.toLocaleString('en-US')} outputs (npartitions, splitOut), or read fewer, larger partitions (blocksize)`,
      { inputs, outputs: npartitions, links: inputs * npartitions, maxLinks: MAX_SHUFFLE_LINKS },
    )
  }
  const shuffle = hashOf(label, sides.map((s) => [s.frame.name, s.by, s.agg ?? null]), npartitions, then)
  const name = `${label}-${shuffle}`
  const splits: TaskSubmission[] = []
  for (const [side, s] of sides.entries()) {
    for (const p of s.frame.parts) {
      const input = splits.length
      const spec: FrameSplitSpec = { shuffle, npartitions, input, side, plan: { partition: partPlan(s.frame, p), by: s.by, npartitions, partBytes: PART_BYTES, ...(s.agg ? { agg: s.agg } : {}) } }
      splits.push(planTask('frame.split', `${name}-split-${input}`, `${label}-split`, spec, boundaries ? [...p.deps, boundaries.key] : p.deps))
    }
  }
  const splitKeys = splits.map((t) => t.key)
  const schemas: FieldSpec[][] = sides.map((s) => [...s.frame.fields])
  const collects = Array.from({ length: npartitions }, (_, output) => {
    const spec: FrameCollectSpec = { shuffle, output, npartitions, then, schemas }
    return planTask('frame.collect', `${name}-${output}`, label, spec, splitKeys)
  })
  const make = () => [...sides.flatMap((s) => s.frame.upstream()), ...(boundaries ? boundaries.tasks() : []), ...splits, ...collects]
  const count = sides.reduce((n, s) => n + s.frame.upstream.count, 0) + (boundaries?.tasks.count ?? 0) + splits.length + collects.length
  return { keys: collects.map((t) => t.key), upstream: upstreamOf(make, count) }
}
