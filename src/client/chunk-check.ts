// Before an array's tasks start: every chunk it makes (generated, or
// assembled by a rechunk) against the smallest worker's limit. A chunk is
// held while it is made beside the buffer it is made in and the copy its
// spill encodes, so one past a share of a worker kills worker after worker
// (a 1.6 GB chunk on 1 GiB workers); refused here, naming the figures.

import { SpillwayError } from '../base/errors'
import type { TaskSubmission } from '../scheduler/scheduler'

/** Copies of a chunk a worker holds at once while making it. */
export const CHUNK_COPIES = 3
/**
 * Share of a worker's limit those copies may take (the rest: managed
 * values, the process itself, the allocator's freed but kept pages). At
 * 0.4, 128 MiB chunks on 1 GiB workers were allowed and a rechunk to them
 * peaked at 93-98% of the limit on a loaded machine: 1 in 3 runs crossed
 * terminate.
 */
export const CHUNK_SHARE = 0.3

const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`

/** The bytes of the largest chunk a worker of `memoryLimit` can make. */
export function maxChunkBytes(memoryLimit: number): number {
  return Math.floor((CHUNK_SHARE * memoryLimit) / CHUNK_COPIES)
}

function chunkOf(s: TaskSubmission): 'generated' | 'rechunked' | undefined {
  if (s.task.fn === 'chunk') return 'generated'
  if (s.task.fn === 'call' && s.task.func.kind === 'native' && s.task.func.op === 'rechunk.collect') return 'rechunked'
  return undefined
}

/** Throws ERR_SPILLWAY_TOO_LARGE for the largest chunk among `subs` that a worker of `memoryLimit` cannot make. */
export function checkChunkFit(subs: TaskSubmission[], memoryLimit: number | undefined): void {
  if (!memoryLimit) return
  let worst: TaskSubmission | undefined
  for (const s of subs) if (chunkOf(s) && s.expectedBytes > (worst?.expectedBytes ?? 0)) worst = s
  const max = maxChunkBytes(memoryLimit)
  if (!worst || worst.expectedBytes <= max) return
  const bytes = worst.expectedBytes
  const how = chunkOf(worst) === 'rechunked' ? 'rechunk to smaller chunks' : 'use smaller chunks'
  throw new SpillwayError(
    'ERR_SPILLWAY_TOO_LARGE',
    `chunk ${JSON.stringify(worst.key)} is ${mib(bytes)} (${bytes / 8} elements); making it holds about ${CHUNK_COPIES}× that at once, more than ${Math.round(CHUNK_SHARE * 100)}% of a worker's ${mib(memoryLimit)} limit: ${how}, of at most ${mib(max)} (${Math.floor(max / 8)} elements), or give workers more memory`,
    { key: worst.key, bytes, maxBytes: max, memoryLimit },
  )
}
