// A frame's join planned on the client: the output's columns (keys once for
// `on`, the suffix on the right's names that clash), checked against both
// schemas when the join is built, and the tasks: a side small enough is
// broadcast (each partition of the other joins it whole), else both sides
// are hash-partitioned by their keys through the frame shuffle and each
// output joins its two sides. The core does the join (crates/core/src/frame/join.rs).

import { ArgumentError } from '../base/errors'
import { hashOf } from '../bag/graph'
import { upstreamOf } from '../bag/upstream'
import type { FieldSpec } from '../wire/frame'
import type { FrameJoinPlan, JoinColumn, JoinHow, JoinSpecData } from '../wire/frame-shuffle'
import { Frame } from './frame'
import { frameShuffled, partPlan, planTask } from './shuffle'
import { fieldOf } from './schema'

export interface JoinOptions {
  /** Key column(s) both sides have under the same name: they appear once in the output. */
  on?: string | string[]
  leftOn?: string | string[]
  rightOn?: string | string[]
  /** 'inner' (default), 'left', 'right', 'outer', 'semi' or 'anti'. */
  how?: JoinHow
  /** Added to the right side's column names that the left already has (default '_right'). */
  suffix?: string
  /** A side estimated below this many bytes is broadcast (default 8 MiB); a one-partition side is too, unless its files hold more than 64 MiB, and by default a Parquet side whose columns take at most 64 MiB in memory. */
  broadcastBytes?: number
  /** Output partitions of a shuffled join (default: the larger side's count, or one per 32 MiB of the two sides' files where that is more). */
  npartitions?: number
}

const HOWS: readonly JoinHow[] = ['inner', 'left', 'right', 'outer', 'semi', 'anti']
export const BROADCAST_BYTES = 8 * 2 ** 20
/** A one-partition side past this many bytes of files is shuffled, not broadcast: every task of the other side would hold it whole, beside its own partition and output. */
export const BROADCAST_MAX_BYTES = 64 * 2 ** 20
/** The share of its rows a filter is taken to keep where a join's side is sized before it runs. */
const FILTER_KEEPS = 0.5
/** Bytes of the sides' files per output of a shuffled join by default: an output's collect holds its shards, their batches and its result at once, a few times this. */
export const JOIN_OUTPUT_BYTES = 32 * 2 ** 20

const names = (v: unknown, field: string): string[] => {
  const list = typeof v === 'string' ? [v] : v
  if (!Array.isArray(list) || list.length === 0 || !list.every((k) => typeof k === 'string')) throw new ArgumentError([{ field, value: v, allowed: 'a column name or a non-empty list of them' }], 'join')
  return list
}

/** The output columns and their fields, as the core makes them. */
export function joinColumns(left: readonly FieldSpec[], right: readonly FieldSpec[], leftOn: string[], rightOn: string[], shared: boolean, how: JoinHow, suffix: string): { columns: JoinColumn[]; fields: FieldSpec[] } {
  const leftMissing = how === 'right' || how === 'outer'
  const rightMissing = how === 'left' || how === 'outer'
  const columns: JoinColumn[] = []
  const fields: FieldSpec[] = []
  for (const f of left) {
    const k = leftOn.indexOf(f.name)
    if (shared && k >= 0 && how !== 'semi' && how !== 'anti') {
      columns.push({ from: 'key', left: f.name, right: rightOn[k], name: f.name })
      fields.push({ ...f, nullable: f.nullable || fieldOf(rightOn[k], right, 'join').nullable })
    } else {
      columns.push({ from: 'left', column: f.name, name: f.name })
      fields.push({ ...f, nullable: f.nullable || leftMissing })
    }
  }
  if (how === 'semi' || how === 'anti') return { columns, fields }
  for (const f of right) {
    if (shared && rightOn.includes(f.name)) continue
    const name = fields.some((x) => x.name === f.name) ? f.name + suffix : f.name
    if (fields.some((x) => x.name === name)) throw new ArgumentError([{ field: 'options.suffix', value: suffix, allowed: `a suffix that makes the right's ${JSON.stringify(f.name)} a new name (${JSON.stringify(name)} is taken)` }], 'join')
    columns.push({ from: 'right', column: f.name, name })
    fields.push({ ...f, name, nullable: f.nullable || rightMissing })
  }
  return { columns, fields }
}

/** Bytes a frame's partitions hold, estimated by the bytes of the files they read, or of their columns in memory where a Parquet footer says (Infinity when one reads another task's output). */
export function estimatedBytes(f: Frame): number {
  let bytes = 0
  for (const p of f.parts) {
    const s = p.source as { kind: string; start?: unknown; end?: unknown }
    if (p.bytes !== undefined) bytes += p.bytes
    else if (typeof s.start === 'number' && typeof s.end === 'number') bytes += s.end - s.start
    else return Infinity
  }
  return bytes
}

/** Whether every partition's size in memory is known (a Parquet scan's, from its footer): then its bytes alone decide a broadcast. */
const sizedInMemory = (f: Frame) => f.parts.every((p) => p.bytes !== undefined)

export function joinFrames(left: Frame, right: Frame, options: JoinOptions): Frame {
  if (!(right instanceof Frame)) throw new ArgumentError([{ field: 'other', value: typeof right, allowed: 'a Frame' }], 'join')
  const o = options ?? {}
  const how = o.how ?? 'inner'
  if (!HOWS.includes(how)) throw new ArgumentError([{ field: 'options.how', value: how, allowed: HOWS.join(', ') }], 'join')
  const shared = o.on !== undefined
  if (shared && (o.leftOn !== undefined || o.rightOn !== undefined)) throw new ArgumentError([{ field: 'options.on', value: o.on, allowed: 'either on, or leftOn and rightOn, not both' }], 'join')
  if (!shared && (o.leftOn === undefined || o.rightOn === undefined)) throw new ArgumentError([{ field: 'options', value: Object.keys(o), allowed: 'on, or both leftOn and rightOn' }], 'join')
  const leftOn = names(shared ? o.on : o.leftOn, shared ? 'options.on' : 'options.leftOn')
  const rightOn = names(shared ? o.on : o.rightOn, shared ? 'options.on' : 'options.rightOn')
  if (leftOn.length !== rightOn.length) throw new ArgumentError([{ field: 'options.rightOn', value: rightOn, allowed: `as many keys as leftOn (${leftOn.length})` }], 'join')
  for (const [i, l] of leftOn.entries()) {
    const lf = fieldOf(l, left.fields, 'join (left side)')
    const rf = fieldOf(rightOn[i], right.fields, 'join (right side)')
    if (lf.type !== rf.type) throw new ArgumentError([{ field: `keys ${JSON.stringify(l)} and ${JSON.stringify(rightOn[i])}`, value: `${lf.type} and ${rf.type}`, allowed: 'keys of the same type (cast one to the other)' }], 'join')
  }
  const suffix = o.suffix ?? '_right'
  if (typeof suffix !== 'string' || suffix === '') throw new ArgumentError([{ field: 'options.suffix', value: suffix, allowed: 'a non-empty string' }], 'join')
  const limit = o.broadcastBytes
  if (limit !== undefined && (typeof limit !== 'number' || !(limit >= 0))) throw new ArgumentError([{ field: 'options.broadcastBytes', value: limit, allowed: 'a number of bytes ≥ 0' }], 'join')
  const { columns, fields } = joinColumns(left.fields, right.fields, leftOn, rightOn, shared, how, suffix)
  const join: JoinSpecData = { leftOn, rightOn, how, columns }
  const strategy = joinStrategy(left, right, how, limit)
  if (strategy.broadcast) return broadcastJoin(left, right, join, fields, strategy.broadcast)
  const n = o.npartitions ?? defaultOutputs(left, right)
  if (!(Number.isSafeInteger(n) && n >= 1)) throw new ArgumentError([{ field: 'options.npartitions', value: n, allowed: 'an integer ≥ 1' }], 'join')
  const out = frameShuffled('join', [{ frame: left, by: { kind: 'hash', keys: leftOn } }, { frame: right, by: { kind: 'hash', keys: rightOn } }], n, { kind: 'join', join })
  return new Frame('join', out.keys.map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] })), fields, [], fields, out.upstream)
}

/** Which side is broadcast, if one is, and why (frame.explain() says it). */
export function joinStrategy(left: Frame, right: Frame, how: JoinHow, given?: number): { broadcast?: 'left' | 'right'; why: string } {
  const limit = given ?? BROADCAST_BYTES
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`
  const small = (f: Frame) => {
    const bytes = estimatedBytes(f)
    const what = sizedInMemory(f) ? `its columns' ${mib(bytes)} in memory` : `its files' ${mib(bytes)}`
    if (bytes < limit) return `${what} are under broadcastBytes (${mib(limit)})`
    if (f.npartitions === 1 && !(Number.isFinite(bytes) && bytes > BROADCAST_MAX_BYTES)) return 'it is one partition'
    // Sizes in memory, known before anything runs, are not the guess a CSV's bytes are: up to the one-partition bound, unless broadcastBytes was given.
    // Each filter is taken to keep half the rows (DataFusion takes a fifth): a part table filtered to 13 k rows of 20 M was never broadcast.
    const filters = f.steps.filter((s) => s.kind === 'filter').length
    const kept = bytes * FILTER_KEEPS ** filters
    if (given === undefined && sizedInMemory(f) && kept <= BROADCAST_MAX_BYTES) return `${what}${filters ? `, ${mib(kept)} after ${filters === 1 ? 'its filter' : `its ${filters} filters`} at half each,` : ''} are within ${mib(BROADCAST_MAX_BYTES)}`
    return undefined
  }
  // A broadcast side's rows would come out once per partition of the other where they must not: its unmatched ones (kept by right/outer on the right, left/outer on the left).
  const right1 = how !== 'right' && how !== 'outer' ? small(right) : undefined
  if (right1) return { broadcast: 'right', why: right1 }
  const left1 = how === 'inner' || how === 'right' ? small(left) : undefined
  if (left1) return { broadcast: 'left', why: left1 }
  return { why: `no side that may be broadcast is one partition or under broadcastBytes (${mib(limit)})` }
}

/** The larger side's partition count, or more where the sides' files would give an output more than JOIN_OUTPUT_BYTES. */
export function defaultOutputs(left: Frame, right: Frame): number {
  const bytes = estimatedBytes(left) + estimatedBytes(right)
  const byBytes = Number.isFinite(bytes) ? Math.ceil(bytes / JOIN_OUTPUT_BYTES) : 0
  return Math.max(left.npartitions, right.npartitions, byBytes)
}

/**
 * Each partition of the other side joined with every partition of `small`.
 * A task reads its partition by the partition's own plan (as a split does),
 * so the partition is never stored as a task's output first, and the core
 * builds the small side once per worker for all the tasks it runs.
 */
function broadcastJoin(left: Frame, right: Frame, join: JoinSpecData, fields: FieldSpec[], small: 'left' | 'right'): Frame {
  const name = `join-${hashOf(left.name, right.name, join, small, 'fused')}`
  const [big, whole] = small === 'right' ? [left, right] : [right, left]
  const wholeKeys = whole.keys()
  const tasks = big.parts.map((p, i) => {
    const plan: FrameJoinPlan = { partition: partPlan(big, p), partitionInputs: p.deps.length, join, small, smallSchema: [...whole.fields] }
    return planTask('frame.join', `${name}-${i}`, 'join', plan, [...p.deps, ...wholeKeys])
  })
  const make = () => [...big.upstream(), ...whole.tasks(false), ...tasks]
  const upstream = upstreamOf(make, big.upstream.count + whole.taskCount() + tasks.length)
  return new Frame('join', tasks.map((t) => ({ source: { kind: 'inputs' as const }, deps: [t.key] })), fields, [], fields, upstream)
}
