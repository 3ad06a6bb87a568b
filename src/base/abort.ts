// `{ signal }` on the calls that wait for the cluster (compute, persist,
// gather, wait, result, setupClient), as Node's own APIs take it: an
// aborted signal rejects the call with its reason (an AbortError
// DOMException when aborted without one); what the call itself made on the
// cluster is let go of, which stops its runs and frees its values and
// shards (the caller's `onAbort`). A signal already aborted rejects before
// anything is submitted. A call that may abort waits for its keys before it
// fetches them: a fetch holds its key until the value is in, which the
// call's release would not stop.

import { ArgumentError } from './errors'

/** `options.signal`, checked; throws its reason at once if it is already aborted. */
export function signalOf(options: unknown, what: string): AbortSignal | undefined {
  const signal = options !== null && typeof options === 'object' ? (options as { signal?: unknown }).signal : undefined
  if (signal === undefined) return undefined
  if (!(signal instanceof AbortSignal)) throw new ArgumentError([{ field: 'options.signal', value: signal === null ? 'null' : typeof signal, allowed: "an AbortSignal (an AbortController's signal, or AbortSignal.timeout(ms))" }], `${what} options`)
  if (signal.aborted) throw reasonOf(signal)
  return signal
}

/** Why `signal` aborted: its reason, or an AbortError as Node's APIs make one. */
export function reasonOf(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/**
 * `p`, or a rejection with the signal's reason once it aborts first, after
 * `onAbort` has let go of what the call made. `p`'s own later rejection is
 * then handled here.
 */
export function unlessAborted<T>(signal: AbortSignal | undefined, p: Promise<T>, onAbort?: () => void): Promise<T> {
  if (!signal) return p
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      p.catch(() => {})
      try {
        onAbort?.()
      } finally {
        reject(reasonOf(signal))
      }
    }
    if (signal.aborted) return abort()
    signal.addEventListener('abort', abort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}

/**
 * Calls `release` when `signal` aborts, until the returned function is
 * called (the persisted collection was released by its owner first).
 */
export function releaseOnAbort(signal: AbortSignal | undefined, release: () => void): () => void {
  if (!signal) return () => {}
  const abort = () => release()
  signal.addEventListener('abort', abort, { once: true })
  return () => signal.removeEventListener('abort', abort)
}
