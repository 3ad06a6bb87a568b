// A bag regrouped by key across the workers (the P2P shuffle): a split task
// per input partition sends its items (or its reduction's pairs), cut by
// output, to the workers that own the outputs; each output partition reads
// its own shards. The outputs are a bag's partitions, so the steps after a
// shuffle fuse into the task that reads them.

import type { TaskSubmission } from '../scheduler/scheduler'
import type { Collect, Partitioner, Reducer, SplitSpec, Step } from '../wire/bag'
import { bagTask, hashOf, type PartDef } from './graph'
import { upstreamOf, type Upstream } from './upstream'

export interface ShuffleSide {
  name: string
  parts: readonly PartDef[]
  steps: readonly Step[]
  upstream: Upstream
  by: Partitioner
  /** Combined inside each input partition first (foldBy, frequencies, distinct with splitOut). */
  reduce?: Reducer
}

export interface Shuffled {
  parts: PartDef[]
  upstream: Upstream
}

/**
 * The output partitions of a shuffle of `sides` into `npartitions`.
 * `boundaries` is the task whose value a range split reads (sortBy).
 */
export function shuffled(label: string, sides: ShuffleSide[], npartitions: number, then: Collect, boundaries?: { key: string; tasks: Upstream }): Shuffled {
  const shuffle = hashOf(label, sides.map((s) => [s.name, s.by, s.reduce]), npartitions, then)
  const name = `${label}-${shuffle}`
  const splits: { key: string; make: () => TaskSubmission }[] = []
  let input = 0
  for (const [side, s] of sides.entries()) {
    for (const [i, part] of s.parts.entries()) {
      const key = `${name}-split-${input}`
      const spec: SplitSpec = { partition: { index: i, broadcast: part.broadcast, source: part.source, steps: [...s.steps], reduce: s.reduce }, shuffle, npartitions, by: s.by, input, side }
      const deps = boundaries ? [...part.deps, boundaries.key] : part.deps
      splits.push({ key, make: () => bagTask('shuffle.split', key, `${label}-split`, spec, deps, false) })
      input++
    }
  }
  const keys = splits.map((s) => s.key)
  const parts: PartDef[] = Array.from({ length: npartitions }, (_, output) => ({ source: { kind: 'shuffle', collect: { shuffle, output, npartitions, then } }, deps: keys }))
  const make = () => [...sides.flatMap((s) => s.upstream()), ...(boundaries ? boundaries.tasks() : []), ...splits.map((s) => s.make())]
  const count = sides.reduce((n, s) => n + s.upstream.count, 0) + (boundaries?.tasks.count ?? 0) + splits.length
  return { parts, upstream: upstreamOf(make, count) }
}
