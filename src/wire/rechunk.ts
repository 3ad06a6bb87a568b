// What a rechunk's tasks carry to the workers, and the geometry both sides
// compute from it: which blocks of the old grid overlap which blocks of the
// new one, and the box (per-dimension [lo, hi)) where they meet. A piece is
// that box's elements in row-major order, as raw bytes, so the splitting
// worker cuts it and the owning worker places it without agreeing on
// anything but the two grids.

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

/**
 * Copies the elements of `box` (array coordinates) from `src`, the
 * row-major bytes of the region `srcBox`, into `dst`, those of `dstBox`.
 * Trailing dimensions the box spans whole in both are one run, so a piece
 * of full rows is a single copy.
 */
export function copyBox(src: Uint8Array, srcBox: Box, dst: Uint8Array, dstBox: Box, box: Box): void {
  const n = box.lo.length
  const size = boxShape(box)
  const sShape = boxShape(srcBox)
  const dShape = boxShape(dstBox)
  const sStride = new Array<number>(n)
  const dStride = new Array<number>(n)
  let s = ITEM_BYTES
  let t = ITEM_BYTES
  for (let d = n - 1; d >= 0; d--) {
    sStride[d] = s
    dStride[d] = t
    s *= sShape[d]
    t *= dShape[d]
  }
  // Dimensions r.. form one contiguous run: every one after r is whole in the box, the source and the destination.
  let r = n - 1
  while (r > 0 && size[r] === sShape[r] && size[r] === dShape[r]) r--
  let run = ITEM_BYTES
  for (let d = r; d < n; d++) run *= size[d]
  if (run === 0) return
  const idx = new Array<number>(r).fill(0)
  for (;;) {
    let so = 0
    let dof = 0
    for (let d = 0; d < n; d++) {
      const i = d < r ? idx[d] : 0
      so += (box.lo[d] + i - srcBox.lo[d]) * sStride[d]
      dof += (box.lo[d] + i - dstBox.lo[d]) * dStride[d]
    }
    dst.set(src.subarray(so, so + run), dof)
    // The next index over the outer dimensions, last fastest.
    let d = r - 1
    while (d >= 0 && ++idx[d] === size[d]) idx[d--] = 0
    if (d < 0) return
  }
}
