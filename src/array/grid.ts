// The chunk grid of an n-d array: row-major chunk ids, each chunk's shape.

import { ConfigError, type ConfigProblem } from '../errors'

export interface Grid {
  shape: number[]
  chunks: number[]
  numblocks: number[]
  count: number
}

export function makeGrid(shape: unknown, chunks: unknown, what = 'array'): Grid {
  const problems: ConfigProblem[] = []
  if (!Array.isArray(shape) || shape.length === 0 || !shape.every((n) => Number.isSafeInteger(n) && n > 0)) {
    problems.push({ field: 'shape', value: shape, allowed: 'a non-empty array of positive integers' })
  }
  const dims = Array.isArray(shape) ? shape.length : 0
  let c: unknown = chunks
  if (typeof c === 'number') c = new Array(dims).fill(c)
  if (c === undefined && Array.isArray(shape)) c = shape.slice()
  if (!Array.isArray(c) || c.length !== dims || !c.every((n) => Number.isSafeInteger(n) && n > 0)) {
    problems.push({ field: 'chunks', value: chunks, allowed: `a positive integer or an array of ${dims} positive integers` })
  }
  if (problems.length) throw new ConfigError(problems, `${what} arguments`)
  const s = shape as number[]
  const ch = (c as number[]).map((n, d) => Math.min(n, s[d]))
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
