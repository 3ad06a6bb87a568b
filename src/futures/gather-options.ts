// gather's `errors` option, as Dask's: 'raise' rejects with the first
// failed Future's error; 'skip' leaves the failed ones out of the result.

import { ArgumentError } from '../base/errors'

export interface GatherOptions {
  /** 'raise' (default): reject with a failed Future's error. 'skip': leave failed (erred or cancelled) Futures out: an array loses the element, an object the property. */
  errors?: 'raise' | 'skip'
  /** Aborting it rejects the gather with the signal's reason; the Futures stay as they are (cancel them to stop their tasks). */
  signal?: AbortSignal
}

const ERRORS = ['raise', 'skip'] as const

/** The checked `errors` option. */
export function gatherErrors(options: unknown): 'raise' | 'skip' {
  if (options === undefined) return 'raise'
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new ArgumentError([{ field: 'options', value: options, allowed: 'an object { errors }' }], 'gather options')
  const unknown = Object.keys(options).filter((k) => k !== 'errors' && k !== 'signal')
  if (unknown.length) throw new ArgumentError(unknown.map((k) => ({ field: `options.${k}`, value: (options as any)[k], allowed: 'errors, signal' })), 'gather options')
  const e = (options as GatherOptions).errors ?? 'raise'
  if (!ERRORS.includes(e)) throw new ArgumentError([{ field: 'options.errors', value: e, allowed: "'raise' or 'skip'" }], 'gather options')
  return e
}
