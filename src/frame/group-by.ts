// A groupBy's graph, by one of two methods. 'tree' (Dask's tree reduction):
// each partition aggregates alone, the partial states merge in levels of
// `splitEvery`, and the last task(s) read every state of the level before —
// few tasks, the right choice where the groups are few. 'shuffle' (Dask's
// shuffle-based groupBy, DataFusion's repartitioned aggregate): each
// partition's states (or its rows, where a sample shows the keys barely
// repeat) go by key hash through the frame shuffle to `splitOut` collects,
// each merging only its own groups — no task holds more than its share of
// them, so a groupBy whose groups outgrow a worker's memory finishes.

import { ArgumentError } from '../base/errors'
import { hashOf } from '../bag/graph'
import { upstreamOf, type Upstream } from '../bag/upstream'
import type { AggSpecData } from '../wire/frame'
import type { Frame } from './frame'
import { combineTaskCount, combineTasks, frameTask } from './graph'
import { frameShuffled } from './shuffle'

export interface AggOptions {
  /**
   * 'tree' merges partial states in a tree, 'shuffle' sends them by key hash
   * to `splitOut` outputs; 'auto' (default) is 'shuffle' where the frame has
   * keys and more partitions than `splitEvery`, else 'tree'.
   */
  method?: 'auto' | 'tree' | 'shuffle'
  /** Output partitions, each holding the groups whose key hash is its own (default: 1 by tree, the input's partitions by shuffle). */
  splitOut?: number
  /** Partial states merged per task of the combine tree (default 8). */
  splitEvery?: number
}

/** DataFusion's skip-partial-aggregation figures: past 100 000 rows, more than 0.8 groups per row sends rows. */
export const SKIP_RATIO = 0.8
export const PROBE_ROWS = 100_000

const METHODS = ['auto', 'tree', 'shuffle']

export const positiveInt = (v: unknown, field: string, what: string, dflt: number, least = 1): number => {
  if (v === undefined) return dflt
  if (!(Number.isSafeInteger(v) && (v as number) >= least)) throw new ArgumentError([{ field, value: v, allowed: `an integer ≥ ${least}` }], what)
  return v as number
}

export interface AggGraph {
  /** The output partitions' keys, in order. */
  keys: string[]
  upstream: Upstream
}

/** The tasks of `spec` over `f`, by the method `options` pick. */
export function aggGraph(f: Frame, spec: AggSpecData, options: AggOptions): AggGraph {
  const method = options.method ?? 'auto'
  if (!METHODS.includes(method)) throw new ArgumentError([{ field: 'options.method', value: method, allowed: METHODS.join(', ') }], 'agg')
  const splitEvery = positiveInt(options.splitEvery, 'options.splitEvery', 'agg', 8, 2)
  const shuffled = spec.keys.length > 0 && (method === 'shuffle' || (method === 'auto' && f.npartitions > splitEvery))
  if (method === 'shuffle' && spec.keys.length === 0) throw new ArgumentError([{ field: 'options.method', value: method, allowed: "'tree' or 'auto' for an aggregate over every row (one group)" }], 'agg')
  const splitOut = positiveInt(options.splitOut, 'options.splitOut', 'agg', shuffled ? Math.max(1, f.npartitions) : 1)
  return shuffled ? shuffleGraph(f, spec, splitOut) : treeGraph(f, spec, splitEvery, splitOut)
}

function treeGraph(f: Frame, spec: AggSpecData, splitEvery: number, splitOut: number): AggGraph {
  const name = `group-by-${hashOf(f.name, spec, splitOut, splitEvery)}`
  const partials = f.parts.map((p, i) => frameTask('frame.partition', `${name}-part-${i}`, 'group-by-part', { source: p.source, schema: [...f.sourceFields], steps: [...f.steps], partial: spec }, p.deps, false))
  const keys = combineTasks(name, partials.map((t) => t.key), spec, splitEvery, splitOut).keys
  const make = () => [...f.upstream(), ...partials, ...combineTasks(name, partials.map((t) => t.key), spec, splitEvery, splitOut).tasks]
  return { keys, upstream: upstreamOf(make, f.upstream.count + partials.length + combineTaskCount(partials.length, splitEvery, splitOut)) }
}

function shuffleGraph(f: Frame, spec: AggSpecData, splitOut: number): AggGraph {
  const agg = { agg: spec, skipRatio: SKIP_RATIO, probeRows: PROBE_ROWS }
  return frameShuffled('group-by', [{ frame: f, by: { kind: 'hash', keys: spec.keys }, agg }], splitOut, { kind: 'agg', agg: spec })
}
