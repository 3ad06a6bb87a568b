// The chunk grid of an n-d array: row-major chunk ids, each chunk's shape.

import { ConfigError, type ConfigProblem } from '../base/errors'

export interface Grid {
  shape: number[]
  chunks: number[]
  numblocks: number[]
  count: number
}

function normalChunks(shape: unknown, chunks: unknown): unknown {
  const dims = Array.isArray(shape) ? shape.length : 0
  if (typeof chunks === 'number') return new Array(dims).fill(chunks)
  if (chunks === undefined && Array.isArray(shape)) return shape.slice()
  return chunks
}

/** Every problem with a shape and chunks, for callers that report them together. */
export function gridProblems(shape: unknown, chunks: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  if (!Array.isArray(shape) || shape.length === 0 || !shape.every((n) => Number.isSafeInteger(n) && n > 0)) {
    problems.push({ field: 'shape', value: shape, allowed: 'a non-empty array of positive integers' })
  }
  const dims = Array.isArray(shape) ? shape.length : 0
  const c = normalChunks(shape, chunks)
  if (!Array.isArray(c) || c.length !== dims || !c.every((n) => Number.isSafeInteger(n) && n > 0)) {
    problems.push({ field: 'chunks', value: chunks, allowed: `a positive integer or an array of ${dims} positive integers` })
  }
  return problems
}

export function makeGrid(shape: unknown, chunks: unknown, what = 'array', earlier: ConfigProblem[] = []): Grid {
  const problems = [...earlier, ...gridProblems(shape, chunks)]
  if (problems.length) throw new ConfigError(problems, `${what} arguments`)
  const s = shape as number[]
  const ch = (normalChunks(shape, chunks) as number[]).map((n, d) => Math.min(n, s[d]))
  const numblocks = s.map((n, d) => Math.ceil(n / ch[d]))
  return { shape: s, chunks: ch, numblocks, count: numblocks.reduce((a, b) => a * b, 1) }
}

/** Shape of chunk `id` (row-major over the block grid); edge chunks are smaller. */
export function chunkShape(g: Grid, id: number): number[] {
  const out = new Array<number>(g.shape.length)
  let rest = id
  for (let d = g.shape.length - 1; d >= 0; d--) {
    const i = rest % g.numblocks[d]
    rest = Math.floor(rest / g.numblocks[d])
    out[d] = Math.min(g.chunks[d], g.shape[d] - i * g.chunks[d])
  }
  return out
}

export function chunkLen(g: Grid, id: number): number {
  return chunkShape(g, id).reduce((a, b) => a * b, 1)
}
