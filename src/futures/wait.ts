// wait() over Futures, as Dask's: it does not throw for a task that
// failed; the Future says how it ended.

import { ArgumentError, SpillwayError } from '../base/errors'
import { Future } from './future'
import { signalOf, unlessAborted } from '../base/abort'

export type ReturnWhen = 'ALL_COMPLETED' | 'FIRST_COMPLETED'

export interface WaitOptions {
  /** Milliseconds before rejecting with ERR_SPILLWAY_TIMEOUT. */
  timeout?: number
  returnWhen?: ReturnWhen
  /** Aborting it rejects the wait with the signal's reason; the Futures stay as they are (cancel them to stop their tasks). */
  signal?: AbortSignal
}

export function futuresOf(fs: unknown, what: string): Future[] {
  const list = fs instanceof Future ? [fs] : fs && typeof (fs as any)[Symbol.iterator] === 'function' ? [...(fs as Iterable<unknown>)] : undefined
  if (!list) throw new ArgumentError([{ field: 'futures', value: fs, allowed: 'a Future or an iterable of Futures' }], what)
  list.forEach((f, i) => {
    if (!(f instanceof Future)) throw new ArgumentError([{ field: `futures[${i}]`, value: f, allowed: 'a Future' }], what)
  })
  return list as Future[]
}

/** Resolves when all (or the first) of `futures` are done; `{ done, notDone }`. */
export async function wait<F extends Future<any>>(futures: F | Iterable<F>, options: WaitOptions = {}): Promise<{ done: F[]; notDone: F[] }> {
  const list = futuresOf(futures, 'wait arguments') as F[]
  const returnWhen = options.returnWhen ?? 'ALL_COMPLETED'
  if (returnWhen !== 'ALL_COMPLETED' && returnWhen !== 'FIRST_COMPLETED') {
    throw new ArgumentError([{ field: 'options.returnWhen', value: returnWhen, allowed: "'ALL_COMPLETED' or 'FIRST_COMPLETED'" }], 'wait options')
  }
  const t = options.timeout
  if (t !== undefined && !(typeof t === 'number' && t >= 0)) throw new ArgumentError([{ field: 'options.timeout', value: t, allowed: 'milliseconds ≥ 0' }], 'wait options')
  const signal = signalOf(options, 'wait')
  const settled = list.map((f) => f.settled())
  const all = returnWhen === 'ALL_COMPLETED' ? Promise.all(settled) : list.length ? Promise.race(settled) : Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  try {
    await unlessAborted(signal, t === undefined
      ? all
      : Promise.race([
          all,
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new SpillwayError('ERR_SPILLWAY_TIMEOUT', `wait timed out after ${t} ms`, { timeout: t })), t)
          }),
        ]))
  } finally {
    clearTimeout(timer)
  }
  return { done: list.filter((f) => f.done), notDone: list.filter((f) => !f.done) }
}
