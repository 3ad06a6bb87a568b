// client.iterate(collection): a bag's items or a frame's record batches as
// an async iterator, in partition order, as partitions finish. The whole
// graph is submitted at once (the workers compute ahead and spill what the
// reader has not reached), but the client fetches only `prefetch`
// partitions ahead of the reader and lets go of each on the cluster as soon
// as it holds it, so its memory is a few partitions whatever the
// collection's size or the reader's pace.

import { tableFromIPC } from 'apache-arrow'
import { ArgumentError } from '../base/errors'
import { Bag } from '../bag/bag'
import { Frame, type FrameBatch } from '../frame/frame'
import { optimized } from '../frame/plan/node'
import type { Scheduler, TaskSubmission } from '../scheduler/scheduler'
import { shufflesOf } from '../scheduler/shuffle'

export interface IterateOptions {
  /** Aborting rejects the pending `next()` with the signal's reason and lets go of everything the iteration made. */
  signal?: AbortSignal
  /** Partitions fetched ahead of the one being read (default 2): more hides latency, each costs a partition of the client's memory. */
  prefetch?: number
}

/** What `client.iterate(c)` yields: a bag's items, or a frame's apache-arrow RecordBatches. */
export type IterateItem<C> = C extends Frame<infer S> ? FrameBatch<S> : C extends Bag<infer T> ? T : never

/** What iterate needs of the client. */
export interface IterateHost {
  readonly scheduler: Scheduler
  check(): void
  checkSize(c: Bag<any> | Frame): void
  submitGraph(subs: TaskSubmission[]): void
  fetch(key: string): Promise<unknown>
}

function optionsOf(o: IterateOptions): { signal?: AbortSignal; prefetch: number } {
  if (o === null || typeof o !== 'object') throw new ArgumentError([{ field: 'options', value: o, allowed: 'an object { signal?, prefetch? }' }], 'iterate')
  const { signal, prefetch = 2 } = o
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new ArgumentError([{ field: 'options.signal', value: typeof signal, allowed: 'an AbortSignal' }], 'iterate')
  if (!(Number.isSafeInteger(prefetch) && prefetch >= 0)) throw new ArgumentError([{ field: 'options.prefetch', value: prefetch, allowed: 'an integer ≥ 0 (partitions fetched ahead)' }], 'iterate')
  return { signal, prefetch }
}

/** A partition's value as what the reader gets of it. */
function piecesOf(c: Bag<any> | Frame, value: unknown): unknown[] {
  return c instanceof Frame ? tableFromIPC(value as Uint8Array).batches : (value as unknown[])
}

/** Rejects with the signal's reason once it aborts, else as `p` does. */
function racing<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

export function iterateCollection(host: IterateHost, c: Bag<any> | Frame, options: IterateOptions = {}): AsyncIterableIterator<unknown> {
  host.check()
  if (!(c instanceof Bag || c instanceof Frame)) throw new ArgumentError([{ field: 'collection', value: typeof c, allowed: 'a Bag or a Frame' }], 'iterate')
  const { signal, prefetch } = optionsOf(options)
  host.checkSize(c)
  return run(host, c instanceof Frame ? optimized(c) : c, signal, prefetch)
}

async function* run(host: IterateHost, c: Bag<any> | Frame, signal: AbortSignal | undefined, prefetch: number): AsyncGenerator<unknown> {
  signal?.throwIfAborted()
  const s = host.scheduler
  const keys = c.keys()
  const held = new Set(keys)
  const subs = c.tasks(false).map((t) => (held.has(t.key) ? { ...t, hold: true } : t))
  let done = false
  // Idempotent: runs when the reader stops (return, throw, end) and at once when the signal aborts.
  const letGo = () => {
    if (done) return
    done = true
    signal?.removeEventListener('abort', letGo)
    if (s.closed) return
    if (held.size) s.release([...held])
    held.clear()
    shufflesOf(s).dropUnread(subs)
  }
  signal?.addEventListener('abort', letGo, { once: true })
  host.submitGraph(subs)
  const fetched = (k: string): Promise<unknown> => {
    const p = host.fetch(k).then((v) => {
      // The client holds it now: the cluster need not.
      if (held.delete(k) && !s.closed) s.release([k])
      return v
    })
    p.catch(() => {}) // read in order below; one not reached (the reader stopped) must not be an unhandled rejection
    return p
  }
  const ahead: Promise<unknown>[] = []
  let next = 0
  try {
    while (next < keys.length || ahead.length) {
      while (next < keys.length && ahead.length <= prefetch) ahead.push(fetched(keys[next++]))
      const value = await racing(ahead.shift()!, signal)
      for (const piece of piecesOf(c, value)) {
        yield piece
        signal?.throwIfAborted()
      }
    }
  } finally {
    ahead.length = 0
    letGo()
  }
}
