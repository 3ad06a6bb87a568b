// What a rechunk's tasks carry to the workers, and the geometry both sides
// compute from it: which blocks of the old grid overlap which blocks of the
// new one, and the box (per-dimension [lo, hi)) where they meet. A piece is
// that box's elements in row-major order, as raw bytes, so the splitting
// worker cuts it and the owning worker places it without agreeing on
// anything but the two grids. The core does the copying (crates/core
// src/chunk/rechunk.rs: cut and assemble).

import type { RawDtype } from './values'

/** An array's shape and the chunk sizes of its old and new grids (edge blocks smaller). */
export interface RechunkGeometry {
  shape: number[]
  from: number[]
  to: number[]
}

/** One old chunk, cut into the pieces of the new chunks it overlaps, pushed to their owners. */
export interface RechunkSplitSpec {
  shuffle: string
  /** Blocks of the new grid: the shuffle's outputs. */
  npartitions: number
  /** This old chunk's id (row-major over the old grid): the shuffle's input. */
  input: number
  geometry: RechunkGeometry
  dtype: RawDtype
  /** The data addresses of the outputs' owners: filled in by the scheduler as it sends the run. */
  owners?: string[]
}

/** One new chunk, assembled from its pieces (the task's inputs are the markers of the splits that send it any). */
export interface RechunkCollectSpec {
  shuffle: string
  output: number
  npartitions: number
  geometry: RechunkGeometry
  dtype: RawDtype
}

export const ITEM_BYTES = 8

export type Box = { lo: number[]; hi: number[] }

function numblocks(shape: number[], chunks: number[]): number[] {
  return shape.map((n, d) => Math.ceil(n / chunks[d]))
}

/** Block `id`'s per-dimension index (row-major). */
function blockIndex(shape: number[], chunks: number[], id: number): number[] {
  const nb = numblocks(shape, chunks)
  const out = new Array<number>(shape.length)
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = id % nb[d]
    id = Math.floor(id / nb[d])
  }
  return out
}

/** The elements block `id` covers, in array coordinates. */
export function blockBox(shape: number[], chunks: number[], id: number): Box {
  const idx = blockIndex(shape, chunks, id)
  return { lo: idx.map((i, d) => i * chunks[d]), hi: idx.map((i, d) => Math.min(shape[d], (i + 1) * chunks[d])) }
}

/** Ids (ascending) of the blocks of `chunks` that overlap `box`. */
export function blocksOverlapping(shape: number[], chunks: number[], box: Box): number[] {
  const nb = numblocks(shape, chunks)
  const first = box.lo.map((l, d) => Math.floor(l / chunks[d]))
  const last = box.hi.map((h, d) => Math.floor((h - 1) / chunks[d]))
  let ids = [0]
  for (let d = 0; d < shape.length; d++) {
    const next: number[] = []
    for (const id of ids) for (let i = first[d]; i <= last[d]; i++) next.push(id * nb[d] + i)
    ids = next
  }
  return ids
}

export function intersect(a: Box, b: Box): Box {
  return { lo: a.lo.map((l, d) => Math.max(l, b.lo[d])), hi: a.hi.map((h, d) => Math.min(h, b.hi[d])) }
}

export function boxShape(b: Box): number[] {
  return b.lo.map((l, d) => b.hi[d] - l)
}

export function boxLen(b: Box): number {
  return boxShape(b).reduce((a, n) => a * n, 1)
}
