// recommend_chunks(): chunk sizes that keep several chunks per worker in
// memory under the target, and no chunk above Dask's ~128 MiB sweet spot.

import { ConfigError } from '../base/errors'
import { gridProblems } from './grid'

export interface RecommendOptions {
  /** Bytes per element (8 for float64 / int64). */
  itemsize?: number
  /** A worker's memory limit in bytes; chunks are sized to fit it. */
  memoryLimit?: number
  /** Threads per worker: each may hold a chunk in flight. */
  threadsPerWorker?: number
  /** Upper bound per chunk, in MiB. Default 128. */
  maxChunkMb?: number
}

/** Bytes one chunk may take for a worker of `memoryLimit` bytes. */
export function chunkBudget(o: RecommendOptions = {}): number {
  const cap = (o.maxChunkMb ?? 128) * 2 ** 20
  if (!o.memoryLimit) return cap
  // At target 0.75, leave room for ~8 chunks per thread plus the chunk being made.
  return Math.max(2 ** 16, Math.min(cap, Math.floor((o.memoryLimit * 0.75) / (8 * (o.threadsPerWorker ?? 1)))))
}

/** Near-cubic chunks of at most `chunkBudget` bytes. */
export function recommendChunks(shape: number[], options: RecommendOptions = {}): number[] {
  const problems = gridProblems(shape, undefined)
  const itemsize = options.itemsize ?? 8
  if (!Number.isSafeInteger(itemsize) || itemsize <= 0) problems.push({ field: 'itemsize', value: itemsize, allowed: 'a positive integer' })
  if (problems.length) throw new ConfigError(problems, 'recommendChunks arguments')
  let budget = Math.max(1, Math.floor(chunkBudget(options) / itemsize))
  const chunks = new Array<number>(shape.length)
  // Fill the smallest dimensions first so their leftover budget goes to the others.
  const order = shape.map((n, d) => [n, d]).sort((a, b) => a[0] - b[0])
  let left = shape.length
  for (const [n, d] of order) {
    const side = Math.max(1, Math.floor(Math.pow(budget, 1 / left) + 1e-9))
    chunks[d] = Math.min(n, side)
    budget = Math.max(1, Math.floor(budget / chunks[d]))
    left--
  }
  return chunks
}
