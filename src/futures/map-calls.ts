// map's calls, as Dask's map makes them: one per position of its
// iterables, zipped and stopping at the shortest (an endless generator
// beside a list is fine), each call taking one argument per iterable.

import { ArgumentError } from '../base/errors'

const isIterable = (v: unknown): v is Iterable<unknown> => v !== null && v !== undefined && typeof (v as any)[Symbol.iterator] === 'function' && typeof v !== 'string'

/**
 * Splits map's arguments after the function into iterables and options:
 * the last is options when it is an object that is not iterable and it
 * follows at least one iterable, so `map(fn, items, options)` reads as before.
 */
export function mapArguments(rest: unknown[]): { iterables: unknown[]; options: unknown } {
  const last = rest[rest.length - 1]
  if (rest.length >= 2 && last !== null && typeof last === 'object' && !isIterable(last)) return { iterables: rest.slice(0, -1), options: last }
  return { iterables: rest, options: undefined }
}

/** Each call's arguments: `[item]` for one iterable, `[a, b, …]` zipped for several. */
export function callsOf(iterables: unknown[]): unknown[][] {
  const one = iterables.length === 1
  const problems = iterables.flatMap((it, i) =>
    isIterable(it) ? [] : [{ field: one ? 'items' : `iterables[${i}]`, value: it, allowed: one ? 'an array or other iterable of items, one task each' : 'an array or other iterable (one argument of each call)' }],
  )
  if (iterables.length === 0) problems.push({ field: 'items', value: undefined, allowed: 'an array or other iterable of items, one task each' })
  if (problems.length) throw new ArgumentError(problems, 'map arguments')
  if (one) return [...(iterables[0] as Iterable<unknown>)].map((item) => [item])
  const its = iterables.map((it) => (it as Iterable<unknown>)[Symbol.iterator]())
  const calls: unknown[][] = []
  try {
    for (;;) {
      const args: unknown[] = []
      for (const it of its) {
        const r = it.next()
        if (r.done) return calls
        args.push(r.value)
      }
      calls.push(args)
    }
  } finally {
    // As zip: the iterators not run to their end are closed.
    for (const it of its) it.return?.()
  }
}
