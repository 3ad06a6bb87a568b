// What an async step cannot do yet, refused by name rather than kept as an
// item (a filter keeping every item, a sum concatenating "[object
// Promise]"): items pulled one by one by a step that takes a partition whole
// (mapPartitions, a write), where a step's first item's result decided that
// it is synchronous; a join's left key in such a pulled join. Everywhere
// else promises are awaited (async-stage.ts).

import { ownTaskError } from '../../../base/errors'
import type { FnDesc } from '../../../wire/functions'

function isAsync(v: unknown): boolean {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return false
  const o = v as { then?: unknown; [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown }
  // A thenable (a Promise, an async function's result), or an async generator's object.
  return typeof o.then === 'function' || (typeof o[Symbol.asyncIterator] === 'function' && typeof o[Symbol.iterator] !== 'function')
}

const WHY = {
  pulled: "its first item's result was not one, and the items before a step that takes the partition whole (mapPartitions, a write) are pulled one by one: a step is async for every item or for none. Return a Promise for every item (declare the function async)",
  join: "the items before a step that takes the partition whole (mapPartitions, a write) are pulled one by one through the join, which cannot wait. Compute the key with an async map before the join, or put the join after the step",
}

/** `v`, a step's result; a Promise (or thenable, or async iterable) fails the task with ERR_SPILLWAY_ASYNC_STEP. */
export function refuseAsync<T>(v: T, desc: FnDesc, role: string, why: keyof typeof WHY = 'join'): T {
  if (!isAsync(v)) return v
  throw ownTaskError(
    'ERR_SPILLWAY_ASYNC_STEP',
    `the ${role} function ${desc.label === 'anonymous' ? '(anonymous)' : desc.label} returned ${typeof (v as { then?: unknown }).then === 'function' ? 'a Promise' : 'an async iterable'} where ${WHY[why]}`,
    { function: desc.label, role },
  )
}
