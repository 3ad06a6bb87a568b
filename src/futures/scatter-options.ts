// Dask's scatter shapes and options. An array scatters as a Future per
// element, as Dask's list does; a plain object stays one value unless
// `split: true` (spillway scattered `{ ... }` as one value before Dask's
// dict form came, and code relies on it); anything else is one value
// (a Buffer or TypedArray is one value: its bytes).

import { ArgumentError, type ConfigProblem } from '../base/errors'
import { Future } from './future'

export interface ScatterOptions {
  /** Worker addresses or names that may hold it. */
  workers?: string[]
  /** A copy on every worker (Dask's broadcast), for a value many tasks take. Default false. */
  broadcast?: boolean
  /** Key by a hash of the value's bytes, so the same value scattered twice is one key (Dask's hash). False: a random key. Default true. */
  hash?: boolean
  /** A Future per element or property: the default for an array; `true` for a plain object, `false` keeps an array one value. */
  split?: boolean
}

const SCATTER_OPTIONS = ['workers', 'broadcast', 'hash', 'split']

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))

export function scatterOptionProblems(o: unknown): ConfigProblem[] {
  if (o === undefined) return []
  if (!isPlainObject(o)) return [{ field: 'options', value: o, allowed: `an object { ${SCATTER_OPTIONS.join(', ')} }` }]
  const p: ConfigProblem[] = []
  for (const k of Object.keys(o)) if (!SCATTER_OPTIONS.includes(k)) p.push({ field: `options.${k}`, value: o[k], allowed: `one of ${SCATTER_OPTIONS.join(', ')}` })
  for (const k of ['broadcast', 'hash', 'split']) if (o[k] !== undefined && typeof o[k] !== 'boolean') p.push({ field: `options.${k}`, value: o[k], allowed: 'true or false' })
  if (o.workers !== undefined && !(Array.isArray(o.workers) && o.workers.every((w) => typeof w === 'string'))) p.push({ field: 'options.workers', value: o.workers, allowed: 'an array of worker addresses or names' })
  if (o.broadcast === true && Array.isArray(o.workers) && o.workers.length) p.push({ field: 'options.workers', value: o.workers, allowed: 'left out with broadcast: true (a copy goes to every worker)' })
  return p
}

/** Scatters `value` in the shape the options ask for, each part through `one`. */
export async function scatterShaped(value: unknown, options: ScatterOptions, one: (v: unknown, field: string) => Promise<Future>): Promise<unknown> {
  const split = options.split ?? Array.isArray(value)
  if (!split) return one(value, 'value')
  let entries: [string | number, unknown][]
  if (Array.isArray(value)) entries = value.map((v, i) => [i, v])
  else if (isPlainObject(value)) entries = Object.entries(value)
  else throw new ArgumentError([{ field: 'options.split', value: true, allowed: 'true only for an array or a plain object (this value is one value)' }], 'scatter options')
  const field = (k: string | number) => `values[${JSON.stringify(k)}]`
  // All checked before any is sent: a refused part leaves nothing half scattered.
  for (const [k, v] of entries) if (v instanceof Future) throw new ArgumentError([{ field: field(k), value: v.key, allowed: 'data, not a Future (it is already on the cluster)' }], 'scatter arguments')
  const futures = await Promise.all(entries.map(([k, v]) => one(v, field(k))))
  return Array.isArray(value) ? futures : Object.fromEntries(entries.map(([k], i) => [k, futures[i]]))
}
