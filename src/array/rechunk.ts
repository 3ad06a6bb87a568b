// A rechunk as P2P-shuffle tasks (Dask's P2P rechunk): one split per old
// chunk, depending on that chunk only, and one collect per new chunk,
// depending only on the splits of the old chunks it overlaps, so a new
// chunk is made as soon as its own pieces have arrived, with no barrier
// over the whole array.

import type { TaskSubmission } from '../scheduler/scheduler'
import { nativeFunction } from '../wire/functions'
import { blockBox, blocksOverlapping, type RechunkCollectSpec, type RechunkGeometry, type RechunkSplitSpec } from '../wire/rechunk'
import type { RawDtype } from '../wire/values'
import { chunkLen, type Grid } from './grid'

export interface RechunkPlan {
  /** The new array's name; its chunks are `${name}-${i}`. */
  name: string
  /** 16 hex digits: names the shuffle's shards on the workers. */
  shuffle: string
  from: Grid
  to: Grid
  dtype: RawDtype
  /** The old chunks' keys and tasks. */
  parentKeys: string[]
  parentTasks: () => TaskSubmission[]
}

export function rechunkTasks(plan: RechunkPlan): TaskSubmission[] {
  const { name, shuffle, from, to, dtype, parentKeys } = plan
  const geometry: RechunkGeometry = { shape: from.shape, from: from.chunks, to: to.chunks }
  const splitKey = (i: number) => `${name}-split-${i}`
  const splits: TaskSubmission[] = parentKeys.map((parentKey, input) => {
    const spec: RechunkSplitSpec = { shuffle, npartitions: to.count, input, geometry, dtype }
    return {
      key: splitKey(input),
      task: { fn: 'call', func: nativeFunction('rechunk.split', 'rechunk-split'), args: [spec, null], deps: [{ key: parentKey, path: [1] }] },
      // Its value is a marker; the chunk's bytes land on the outputs' owners.
      expectedBytes: 1,
      deps: [parentKey],
      group: 'rechunk-split',
      hold: false,
    }
  })
  const outputs: TaskSubmission[] = Array.from({ length: to.count }, (_, output) => {
    const inputs = blocksOverlapping(from.shape, from.chunks, blockBox(to.shape, to.chunks, output)).map(splitKey)
    const spec: RechunkCollectSpec = { shuffle, output, npartitions: to.count, geometry, dtype }
    return {
      key: `${name}-${output}`,
      task: { fn: 'call', func: nativeFunction('rechunk.collect', 'rechunk'), args: [spec, ...inputs.map(() => null)], deps: inputs.map((key, j) => ({ key, path: [1 + j] })), dtype },
      expectedBytes: chunkLen(to, output) * 8,
      deps: inputs,
      format: `raw:${dtype}` as const,
      group: 'rechunk',
    }
  })
  const parents = plan.parentTasks().map((t) => ({ ...t, hold: false }))
  return [...parents, ...splits, ...outputs]
}
