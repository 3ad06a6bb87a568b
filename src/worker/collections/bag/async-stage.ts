// Steps, keys and reducers that return promises. A step stays on the
// synchronous push path (items.ts: no promise per item) until one of its
// calls returns a thenable; from then on that step queues its items, keeps
// at most `concurrency` calls in flight, and hands the results on in the
// items' order (p-map's preserveOrder). What it queued is drained before the
// partition's result is taken, so a rejection fails the task with the user's
// own error, as a synchronous throw does.

import { runInStore, type TaskStore } from '../../context'
import type { Sink } from './items'

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function'
}

const noop = () => {}

/** A push stage: `call` on each item; `emit(item, result)` in the items' order once the result is known. */
export interface Stage {
  sink: Sink
  /** Set once a call returned a thenable: items go through `sink`'s queue from then on. */
  queued: boolean
  /** Makes the stage async at item `v`, whose call returned the thenable `r` (a step's own synchronous sink found it). */
  begin(v: unknown, r: PromiseLike<unknown>): void
  /** Settles once every item pushed so far has been emitted; rejects with the first error. */
  drained(): Promise<void>
}

/**
 * A stage for `call`, synchronous until a call returns a thenable. `task`
 * gives the user's function its context across its awaits once the stage is
 * async (each call then runs under AsyncLocalStorage).
 */
export function stage(call: (v: unknown) => unknown, emit: (item: unknown, result: unknown) => void, concurrency: number, task?: TaskStore): Stage {
  // The items' slots in order: a result, or a pending call.
  type Slot = { item: unknown; done: boolean; value: unknown }
  let queue: Slot[] | undefined
  let head = 0
  let inFlight = 0
  let started = 0
  let failed: { error: unknown } | undefined
  let wake: (() => void) | undefined
  const later = task ? (v: unknown) => runInStore(task, () => call(v)) : call

  const flush = () => {
    const q = queue!
    for (;;) {
      while (head < q.length && q[head].done && !failed) {
        const s = q[head++]
        try {
          emit(s.item, s.value)
        } catch (e) {
          failed = { error: e }
        }
      }
      const before = started
      launch()
      // A call that answered at once leaves its slot done at the head.
      if (started === before || failed || !(head < q.length && q[head].done)) break
    }
    if (head > 1024 && head * 2 > q.length) {
      q.splice(0, head)
      started -= head
      head = 0
    }
    if (wake && (failed || (head === q.length && inFlight === 0))) wake()
  }
  const settle = (s: Slot, value: unknown) => {
    s.done = true
    s.value = value
    inFlight--
    flush()
  }
  const start = (s: Slot, r: unknown) => {
    inFlight++
    Promise.resolve(r).then(
      (v) => settle(s, v),
      (e) => {
        if (!failed) failed = { error: e }
        inFlight--
        flush()
      },
    )
  }
  const launch = () => {
    const q = queue!
    while (!failed && inFlight < concurrency && started < q.length) {
      // An aborted task starts no further item: the one in flight may not look at its signal.
      if (task?.signal.aborted) {
        failed = { error: task.signal.reason }
        return
      }
      const s = q[started++]
      let r: unknown
      try {
        r = later(s.item)
      } catch (e) {
        failed = { error: e }
        return
      }
      if (isThenable(r)) start(s, r)
      else {
        s.done = true
        s.value = r
      }
    }
  }

  const begin = (v: unknown, r: PromiseLike<unknown>) => {
    st.queued = true
    queue = [{ item: v, done: false, value: undefined }]
    started = 1
    start(queue[0], r)
  }
  const sink: Sink = (v) => {
    if (queue) {
      if (failed) return
      queue.push({ item: v, done: false, value: undefined })
      flush()
      return
    }
    const r = call(v)
    if (!isThenable(r)) return emit(v, r)
    // The first thenable: this stage is async from here on.
    begin(v, r)
  }

  const drained = () =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (failed) return reject(failed.error)
        if (!queue || (head === queue.length && inFlight === 0)) return resolve()
        wake = check
      }
      check()
    }).finally(() => {
      wake = undefined
    })
  const st: Stage = { sink, drained, begin, queued: false }
  return st
}

/** Drains `stages` in order: each one's last items go to the next before the next is drained. */
export async function drainAll(stages: Stage[]): Promise<void> {
  for (const s of stages) await s.drained()
}

/**
 * A key function for `items`, whose keys are known before any is asked for:
 * the first item's result decides; if it is a thenable, every item's key is
 * awaited (at most `concurrency` at a time) and looked up by the item after.
 * A key function is a function of its item, so an item seen twice has one key.
 */
export async function keysOf(items: Iterable<unknown>, key: (v: unknown) => unknown, concurrency: number, task?: TaskStore): Promise<(v: unknown) => unknown> {
  const it = items[Symbol.iterator]()
  const first = it.next()
  if (first.done) return key
  const r = key(first.value)
  if (!isThenable(r)) return key
  const keys = new Map<unknown, unknown>()
  const s = stage((v) => (v === first.value ? r : key(v)), (item, k) => void keys.set(item, k), concurrency, task)
  s.sink(first.value)
  for (let n = it.next(); !n.done; n = it.next()) s.sink(n.value)
  await s.drained()
  return (v) => keys.get(v)
}

/** Marks a pending value handled now (its rejection is awaited later), so no unhandled rejection ends the worker first. */
export function quiet<T>(p: PromiseLike<T>): PromiseLike<T> {
  Promise.resolve(p).catch(noop)
  return p
}

/** `m` with its values that are promises (an async binop's accumulators) replaced by what they resolve to. */
export async function settled<K>(m: Map<K, unknown>): Promise<Map<K, unknown>> {
  const pending: Promise<void>[] = []
  for (const [k, v] of m) if (isThenable(v)) pending.push(Promise.resolve(v).then((x) => void m.set(k, x)))
  await Promise.all(pending)
  return m
}
