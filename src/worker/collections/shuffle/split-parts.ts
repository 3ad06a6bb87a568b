// An output's items, on the split side, cut into the shards that carry them.

import { unserializable } from '../../../wire/values'
import { encodeShard } from './shard-codec'

/** Shards larger than this go as several parts (a frame stays well under the data socket's cap). */
export const SHARD_PART = 8 * 2 ** 20

/** A shard's items as one or more encoded blobs of at most about SHARD_PART bytes. */
export function splitParts(items: unknown[]): Buffer[] {
  let whole: Buffer
  try {
    whole = encodeShard(items)
  } catch (e) {
    // As a stored value would be: the shard's items can no more travel than be stored.
    throw unserializable(items, e, `the items this task sends to a shuffle's output (${items.length}, as an array)`, true)
  }
  if (whole.length <= SHARD_PART || items.length === 1) return [whole]
  const pieces = Math.ceil(whole.length / SHARD_PART)
  const per = Math.ceil(items.length / pieces)
  const out: Buffer[] = []
  for (let i = 0; i < items.length; i += per) out.push(encodeShard(items.slice(i, i + per)))
  return out
}
