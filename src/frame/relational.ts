// join, sortBy and shuffle join Frame here rather than in frame.ts: their
// planners (join.ts, sort.ts, shuffle.ts) make Frames, so frame.ts importing
// them would be a circle. Loaded with the package (frame/api.ts).

import { ArgumentError } from '../base/errors'
import { Frame, positiveInt } from './frame'
import { joinFrames, type JoinOptions } from './join'
import { sortFrame, type SortOptions } from './sort'
import { frameShuffled } from './shuffle'
import { fieldOf } from './schema'
import { planOf, recorded } from './plan/node'

declare module './frame' {
  interface Frame<S = any> {
    /** This frame joined with `other` (a hash join in the core; see docs/frame-join-sort.md). */
    join(other: Frame, options: JoinOptions): Frame
    /** The rows sorted by `keys` (sampled ranges, each sorted in the core): computed, the whole table in order. */
    sortBy(keys: string | string[], options?: SortOptions): Frame<S>
    /** The rows hash-partitioned by `keys` into `npartitions` (default: as many as now), as Dask's shuffle: equal keys land in one partition. */
    shuffle(keys: string | string[], options?: { npartitions?: number }): Frame<S>
  }
}

Frame.prototype.join = function (this: Frame, other: Frame, options: JoinOptions) {
  return recorded(joinFrames(this, other, options), { op: 'join', left: planOf(this), right: planOf(other), options: options ?? {} })
}

Frame.prototype.sortBy = function (this: Frame, keys: string | string[], options: SortOptions = {}) {
  return recorded(sortFrame(this, keys, options), { op: 'sort', input: planOf(this), keys: typeof keys === 'string' ? [keys] : keys, options: options ?? {} })
}

Frame.prototype.shuffle = function (this: Frame, keys: string | string[], options: { npartitions?: number } = {}) {
  const list = typeof keys === 'string' ? [keys] : keys
  if (!Array.isArray(list) || list.length === 0 || !list.every((k) => typeof k === 'string')) throw new ArgumentError([{ field: 'keys', value: keys, allowed: 'a column name or a non-empty list of them' }], 'shuffle')
  for (const k of list) fieldOf(k, this.fields, 'shuffle')
  const n = positiveInt(options?.npartitions, 'options.npartitions', 'shuffle', this.npartitions)
  const out = frameShuffled('shuffle', [{ frame: this, by: { kind: 'hash', keys: list } }], n, { kind: 'concat' })
  return new Frame('shuffle', out.keys.map((k) => ({ source: { kind: 'inputs' as const }, deps: [k] })), [...this.fields], [], [...this.fields], out.upstream)
}
