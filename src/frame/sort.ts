// A frame's sortBy planned on the client, as the bag's: each input
// partition gives a sample of its sort keys, one task turns the samples
// into n-1 range boundaries, the frame shuffle sends each row to its range
// and each range is sorted in the core (stable, so ties keep their input
// order). The outputs are the ranges in order: computed, the frame is the
// whole table sorted.

import { ArgumentError } from '../base/errors'
import { hashOf } from '../bag/graph'
import { upstreamOf } from '../bag/upstream'
import type { FrameBoundariesPlan, FrameSamplePlan, SortKeyData } from '../wire/frame-shuffle'
import { Frame } from './frame'
import { frameShuffled, partPlan, planTask } from './shuffle'
import { fieldOf } from './schema'

export interface SortOptions {
  /** One for every key, or one for all (default false). */
  descending?: boolean | boolean[]
  /** Nulls after every value (default true, as SQL's ascending order and the bag's sortBy), else before. */
  nullsLast?: boolean
  /** Output partitions (default: the frame's count). */
  npartitions?: number
}

/** Sample keys per input partition for each output: enough that the ranges come out near even. */
const SAMPLES_PER_OUTPUT = 20

export function sortFrame(f: Frame, by: string | string[], options: SortOptions = {}): Frame {
  const keys = typeof by === 'string' ? [by] : by
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string')) throw new ArgumentError([{ field: 'keys', value: by, allowed: 'a column name or a non-empty list of them' }], 'sortBy')
  for (const k of keys) fieldOf(k, f.fields, 'sortBy')
  const o = options ?? {}
  const desc = o.descending ?? false
  const descending = typeof desc === 'boolean' ? keys.map(() => desc) : desc
  if (!Array.isArray(descending) || descending.length !== keys.length || !descending.every((d) => typeof d === 'boolean')) {
    throw new ArgumentError([{ field: 'options.descending', value: desc, allowed: `true, false, or a list of ${keys.length} of them (one per key)` }], 'sortBy')
  }
  const nullsLast = o.nullsLast ?? true
  if (typeof nullsLast !== 'boolean') throw new ArgumentError([{ field: 'options.nullsLast', value: nullsLast, allowed: 'true (default: nulls last) or false (first)' }], 'sortBy')
  const n = o.npartitions ?? f.npartitions
  if (!(Number.isSafeInteger(n) && n >= 1)) throw new ArgumentError([{ field: 'options.npartitions', value: n, allowed: 'an integer ≥ 1' }], 'sortBy')
  const sortKeys: SortKeyData[] = keys.map((name, i) => ({ name, descending: descending[i], nullsLast }))
  const name = `sort-sample-${hashOf(f.name, sortKeys, n)}`
  const m = materialized(f)
  const samples = m.parts.map((p, i) => {
    const plan: FrameSamplePlan = { partition: partPlan(m, p), keys: sortKeys, per: SAMPLES_PER_OUTPUT * n }
    return planTask('frame.sample', `${name}-${i}`, 'sort-sample', plan, p.deps)
  })
  const bounds: FrameBoundariesPlan = { keys: sortKeys, npartitions: n }
  const boundaries = planTask('frame.boundaries', `${name}-boundaries`, 'sort-boundaries', bounds, samples.map((t) => t.key))
  // The frame's own upstream runs once: the splits' share of the graph brings it.
  const tasks = upstreamOf(() => [...samples, boundaries], samples.length + 1)
  const out = frameShuffled('sort-by', [{ frame: m, by: { kind: 'range', keys: sortKeys } }], n, { kind: 'sort', keys: sortKeys }, { key: boundaries.key, tasks })
  return new Frame('sort-by', out.keys.map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] })), [...f.fields], [], [...f.fields], out.upstream, { input: f, keys: sortKeys })
}

/**
 * `f` as its partitions' outputs: read (and filtered, …) once, stored by the
 * worker as IPC (managed memory, spillable), then sampled and split, as
 * Dask's set_index partitions once. Reading a CSV block twice cost more than
 * the IPC's encode and two decodes.
 */
function materialized(f: Frame): Frame {
  const parts = f.keys().map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] }))
  return new Frame(f.label, parts, [...f.fields], [], [...f.fields], upstreamOf(() => f.tasks(false), f.taskCount()))
}
