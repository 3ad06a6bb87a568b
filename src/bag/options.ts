// The checks a bag's methods share: their options (npartitions,
// splitEvery, splitOut) and how a step's or a key's function is described
// for the workers, each error naming the option it is about.

import { ArgumentError } from '../base/errors'
import type { KeySpec, StepFn } from '../wire/bag'
import { describeFunction, type TaskFunction } from '../wire/functions'

/** A step's options, given as its last argument: `bag.map(fetchOne, { concurrency: 8 })`. */
export interface StepOptions {
  /**
   * How many of the function's promises may be pending at once in each
   * partition (default 1); results keep the items' order either way.
   */
  concurrency?: number
}

/**
 * A step's extra arguments and its options: a last argument that is a
 * plain object with `concurrency` as its only field is the step's options
 * (to pass such an object to the function, add an argument after it).
 */
export function splitStepOptions(args: unknown[], what: string): { args: unknown[]; concurrency?: number } {
  const last = args[args.length - 1]
  if (last === null || typeof last !== 'object' || Object.getPrototypeOf(last) !== Object.prototype) return { args }
  const keys = Object.keys(last)
  if (keys.length !== 1 || keys[0] !== 'concurrency') return { args }
  return { args: args.slice(0, -1), concurrency: concurrencyOf(last as StepOptions, what) }
}

/** `options.concurrency`, checked; undefined where not given (so a bag's keys are as they were without it). */
export function concurrencyOf(o: StepOptions | undefined, what: string): number | undefined {
  const c = o?.concurrency
  if (c === undefined) return undefined
  if (!(Number.isSafeInteger(c) && c >= 1)) throw new ArgumentError([{ field: 'options.concurrency', value: c, allowed: "a positive integer: how many of a step's promises may be pending at once per partition (default 1)" }], what)
  return c
}

export function stepFn(fn: TaskFunction, args: unknown[], field: string, concurrency?: number): StepFn {
  try {
    return concurrency === undefined ? { fn: describeFunction(fn), args } : { fn: describeFunction(fn), args, concurrency }
  } catch (e) {
    if (e instanceof ArgumentError) throw new ArgumentError(e.problems.map((p) => ({ ...p, field: p.field === 'fn' ? field : `${field}.${p.field.replace(/^fn\./, '')}` })), 'bag step')
    throw e
  }
}

export function keySpec(key: unknown, field: string, concurrency?: number): KeySpec {
  if (typeof key === 'string' || typeof key === 'number') return { field: key }
  return { fn: stepFn(key as TaskFunction, [], field, concurrency) }
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

export interface ShuffleOptions extends StepOptions {
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
