// The recipe's array constructors, after dask.array.random.

import { randomInt } from 'node:crypto'
import type { ConfigProblem } from '../base/errors'
import { ChunkedArray } from './array'
import { makeGrid } from './grid'

export interface RandomOptions {
  chunks?: number | number[]
  /** Same seed, same values, whatever the workers. A fresh one when absent. */
  seed?: number
}

function seedOf(seed: unknown, problems: ConfigProblem[]): number {
  if (seed === undefined) return randomInt(0, 2 ** 47)
  if (!Number.isSafeInteger(seed) || (seed as number) < 0) {
    problems.push({ field: 'seed', value: seed, allowed: 'a non-negative safe integer' })
    return 0
  }
  return seed as number
}

/** Uniform float64 in [0, 1). */
function randomArray(shape: number[], options: RandomOptions = {}): ChunkedArray {
  const problems: ConfigProblem[] = []
  const seed = seedOf(options.seed, problems)
  return new ChunkedArray(makeGrid(shape, options.chunks, 'random.random', problems), { kind: 'random', seed })
}

/** Uniform int64 in [low, high), as numpy's randint. */
function randint(low: number, high: number, shape: number[], options: RandomOptions = {}): ChunkedArray {
  const problems: ConfigProblem[] = []
  if (!Number.isSafeInteger(low)) problems.push({ field: 'low', value: low, allowed: 'a safe integer' })
  if (!Number.isSafeInteger(high) || !(high > low)) problems.push({ field: 'high', value: high, allowed: `a safe integer greater than low (${low})` })
  const seed = seedOf(options.seed, problems)
  return new ChunkedArray(makeGrid(shape, options.chunks, 'random.randint', problems), { kind: 'randint', seed, low, high })
}

export const random = { random: randomArray, randint }
