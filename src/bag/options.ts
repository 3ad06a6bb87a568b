// The checks a bag's methods share: their options (npartitions,
// splitEvery, splitOut) and how a step's or a key's function is described
// for the workers, each error naming the option it is about.

import { ArgumentError } from '../base/errors'
import type { KeySpec, StepFn } from '../wire/bag'
import { describeFunction, type TaskFunction } from '../wire/functions'

export function stepFn(fn: TaskFunction, args: unknown[], field: string): StepFn {
  try {
    return { fn: describeFunction(fn), args }
  } catch (e) {
    if (e instanceof ArgumentError) throw new ArgumentError(e.problems.map((p) => ({ ...p, field: p.field === 'fn' ? field : `${field}.${p.field.replace(/^fn\./, '')}` })), 'bag step')
    throw e
  }
}

export function keySpec(key: unknown, field: string): KeySpec {
  if (typeof key === 'string' || typeof key === 'number') return { field: key }
  return { fn: stepFn(key as TaskFunction, [], field) }
}

export function positiveInt(v: unknown, field: string, what: string): number {
  if (!(Number.isSafeInteger(v) && (v as number) >= 1)) throw new ArgumentError([{ field, value: v, allowed: 'a positive integer' }], what)
  return v as number
}

export interface ReductionOptions {
  /** Partials combined per task of the tree (default 8). */
  splitEvery?: number
  /**
   * The result as this many hash partitions, made by the P2P shuffle, so no
   * single task holds every key (foldBy, frequencies, distinct).
   */
  splitOut?: number
}

export interface ShuffleOptions {
  /** Output partitions (default: as many as the input has). */
  npartitions?: number
}

export function npartitionsOf(o: ShuffleOptions | undefined, dflt: number, what: string): number {
  if (o !== undefined && (o === null || typeof o !== 'object')) throw new ArgumentError([{ field: 'options', value: o, allowed: 'an object { npartitions }' }], what)
  return o?.npartitions === undefined ? Math.max(1, dflt) : positiveInt(o.npartitions, 'options.npartitions', what)
}

export function splitEveryOf(o: ReductionOptions | undefined, what: string): number {
  if (o !== undefined && (o === null || typeof o !== 'object')) throw new ArgumentError([{ field: 'options', value: o, allowed: 'an object { splitEvery }' }], what)
  return o?.splitEvery === undefined ? 8 : Math.max(2, positiveInt(o.splitEvery, 'options.splitEvery', what))
}
