// A bag's partitions as scheduler tasks. Keys are hashes of what a task
// does (its source, its fused steps, its inputs), so the same bag built
// twice is the same graph and runs once.

import { createHash } from 'node:crypto'
import type { TaskSubmission } from '../scheduler/scheduler'
import type { AggregateSpec, PartitionSource, PartitionSpec, Reducer, SplitSpec, Step } from '../wire/bag'
import { ArgumentError } from '../base/errors'
import { canonical, NotCanonical } from '../wire/canonical'
import { nativeFunction } from '../wire/functions'
import { extract } from '../wire/nesting'
import type { DepRef, TaskFn } from '../wire/protocol'
import { Future } from '../futures/future'

/** One partition before its steps: where its items come from, and the tasks it reads. */
export interface PartDef {
  source: PartitionSource
  /** Keys of the tasks whose values are its inputs (source 'inputs'), then those of `broadcast` steps. */
  deps: string[]
  /** How many of the deps, at the end, a step reads (a broadcast join's small side). */
  broadcast?: number
}

const isFuture = (v: unknown): v is Future => v instanceof Future

/**
 * A key for what `parts` describe, from a lossless encoding of them
 * (wire/canonical.ts): specs a worker could tell apart — a Map from an
 * object, NaN from null, -0 from 0 — never share a key, and the same spec
 * built twice has one. Futures count as their keys. A value that could not
 * reach a worker (a function, a symbol) is refused here, where the bag is
 * built, by its path.
 */
export function hashOf(...parts: unknown[]): string {
  const h = createHash('sha256')
  try {
    h.update(canonical(parts.length === 1 ? parts[0] : parts, { mode: 'exact', replace: (v) => (v instanceof Future ? v.key : undefined), flush: (piece) => h.update(piece) }))
  } catch (e) {
    if (!(e instanceof NotCanonical)) throw e
    throw new ArgumentError([{ field: `spec${e.path}`, value: e.what, allowed: 'data a worker can receive: strings, numbers, bigints, booleans, null, undefined, arrays, objects, Maps, Sets, Dates, RegExps, typed arrays, Buffers, and Futures' }], 'bag')
  }
  return h.digest('hex').slice(0, 16)
}

const partsKeys = new WeakMap<readonly PartDef[], string>()

/**
 * The key of a bag's partitions, once per array: every step makes a new bag
 * over the same parts, and hashing a large fromSequence's items again for
 * each would cost more than the step.
 */
export function partsKey(parts: readonly PartDef[]): string {
  let key = partsKeys.get(parts)
  if (key === undefined) partsKeys.set(parts, (key = hashOf({ parts })))
  return key
}

/**
 * A task of `op` on `spec` with `inputs` as its arguments after the spec:
 * Futures inside the spec (a step's extra arguments) become inputs too.
 */
export function bagTask(op: 'bag.partition' | 'bag.aggregate' | 'shuffle.split', key: string, group: string, spec: PartitionSpec | AggregateSpec | SplitSpec, inputs: string[], hold: boolean): TaskSubmission {
  const { value, slots } = extract(spec, isFuture)
  const deps: DepRef[] = [...slots.map(({ item, path }) => ({ key: item.key, path: [0, ...path] })), ...inputs.map((k, j) => ({ key: k, path: [1 + j] }))]
  const task: TaskFn = { fn: 'call', func: nativeFunction(op, group), args: [value, ...inputs.map(() => null)], deps }
  return { key, task, expectedBytes: 1, deps: [...new Set(deps.map((d) => d.key))], group, hold }
}

/** The partition tasks of parts with steps (and a reduction's per-partition step). */
export function partitionTasks(name: string, parts: PartDef[], steps: Step[], hold: boolean, reduce?: Reducer): TaskSubmission[] {
  return parts.map((p, i) => bagTask('bag.partition', `${name}-${i}`, name.replace(/-[0-9a-f]{16}$/, ''), { index: i, broadcast: p.broadcast, source: p.source, steps, reduce }, p.deps, hold))
}

/**
 * A reduction's tree over partials: levels of at most `splitEvery` inputs
 * until one is left, whose value is the result. Returns its tasks and the
 * final key.
 */
export function treeTasks(name: string, partials: string[], reduce: Reducer, splitEvery: number): { tasks: TaskSubmission[]; key: string } {
  const tasks: TaskSubmission[] = []
  let level = partials
  let depth = 0
  const group = name.replace(/-[0-9a-f]{16}$/, '')
  if (partials.length === 0) return { tasks: [bagTask('bag.aggregate', `${name}-final`, group, { reduce, final: true }, [], true)], key: `${name}-final` }
  do {
    const next: string[] = []
    const last = level.length <= splitEvery
    for (let j = 0; j < level.length; j += splitEvery) {
      const key = last ? `${name}-final` : `${name}-agg-${depth}-${j / splitEvery}`
      tasks.push(bagTask('bag.aggregate', key, group, { reduce, final: last }, level.slice(j, j + splitEvery), last))
      next.push(key)
    }
    level = next
    depth++
  } while (level.length > 1)
  return { tasks, key: level[0] }
}
