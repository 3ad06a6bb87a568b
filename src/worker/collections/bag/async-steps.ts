// Bag steps, keys and reducers run synchronously, item by item: a Promise
// returned by one would be kept as an item (a filter keeps every item, a
// sum concatenates "[object Promise]"). Until async steps are built, such
// a result fails its task by name. The one check is here, so that async
// steps replace it in one place.

import { ownTaskError } from '../../../base/errors'
import type { FnDesc } from '../../../wire/functions'

function isAsync(v: unknown): boolean {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return false
  const o = v as { then?: unknown; [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown }
  // A thenable (a Promise, an async function's result), or an async generator's object.
  return typeof o.then === 'function' || (typeof o[Symbol.asyncIterator] === 'function' && typeof o[Symbol.iterator] !== 'function')
}

/** `v`, a step's result; a Promise (or thenable, or async iterable) fails the task with ERR_SPILLWAY_ASYNC_STEP. */
export function refuseAsync<T>(v: T, desc: FnDesc, role: string): T {
  if (!isAsync(v)) return v
  throw ownTaskError(
    'ERR_SPILLWAY_ASYNC_STEP',
    `the ${role} function ${desc.label === 'anonymous' ? '(anonymous)' : desc.label} returned ${typeof (v as { then?: unknown }).then === 'function' ? 'a Promise' : 'an async iterable'}: bag steps, keys and reducers run synchronously and async ones are not supported yet. ` +
      'Make it synchronous (read what it awaits before the bag, or pass it as an argument), or run the async work with client.submit / client.map',
    { function: desc.label, role },
  )
}
