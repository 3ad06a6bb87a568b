// A groupBy's options, and the integer check frames' options share: apart
// from group-by.ts, which plans through the shuffle (whose planner makes
// Frames), so frame.ts can name them without an import circle.

import { ArgumentError } from '../base/errors'

export interface AggOptions {
  /**
   * 'tree' merges partial states in a tree, 'shuffle' sends them by key hash
   * to `splitOut` outputs; 'auto' (default) is 'shuffle' where the frame has
   * keys and more partitions than `splitEvery`, else 'tree'.
   */
  method?: 'auto' | 'tree' | 'shuffle'
  /** Output partitions, each holding the groups whose key hash is its own (default: 1 by tree, the input's partitions by shuffle). */
  splitOut?: number
  /** Partial states merged per task of the combine tree (default 8). */
  splitEvery?: number
}

export const positiveInt = (v: unknown, field: string, what: string, dflt: number, least = 1): number => {
  if (v === undefined) return dflt
  if (!(Number.isSafeInteger(v) && (v as number) >= least)) throw new ArgumentError([{ field, value: v, allowed: `an integer ≥ ${least}` }], what)
  return v as number
}
