// What submit, map and gather make of their arguments, the same for a
// client in the scheduler's process and for a task's own client on a worker
// (getClient()): the options checked, the Futures in the arguments found
// (each one the caller's own, still held), and the sub-tasks keyed, a pure
// call by a hash of its function and arguments so it is computed once.

import { createHash, randomUUID } from 'node:crypto'
import { serialize } from 'node:v8'
import { ArgumentError, type ConfigProblem } from '../base/errors'
import { describeFunction, functionLabel, type FnDesc, type TaskFunction } from '../wire/functions'
import { checkKeys } from '../wire/keys'
import { dropAt, extract, place, type Slot } from '../wire/nesting'
import type { DepRef, SubTask } from '../wire/protocol'
import { unsendable } from '../wire/cloneable'
import { Future, type FutureOwner } from './future'
import { callsOf } from './map-calls'

export interface SubmitOptions {
  /** The task's key; by default made from the function's name and a hash (pure) or a random id. */
  key?: string
  /** Key the call by a hash of function and arguments, so the same call runs once. Default: true for module functions. */
  pure?: boolean
  /** Reruns after a thrown error. Default 0. */
  retries?: number
  /** Higher runs first among tasks ready at once. Default 0. */
  priority?: number
  /** Worker addresses or names the task may run on. */
  workers?: string[]
}

export interface MapOptions extends Omit<SubmitOptions, 'key'> {
  /** One key per call. */
  key?: string[]
  /** Hands the tasks to the scheduler this many at a time (Dask's batch_size); the keys and results are the same. Default: all at once. */
  batchSize?: number
}

const SUBMIT_OPTIONS = new Set(['key', 'pure', 'retries', 'priority', 'workers'])
const MAP_OPTIONS = new Set([...SUBMIT_OPTIONS, 'batchSize'])

export function optionProblems(o: unknown, what: 'submit' | 'map', n = 0): ConfigProblem[] {
  if (o === undefined) return []
  const known = what === 'map' ? MAP_OPTIONS : SUBMIT_OPTIONS
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return [{ field: 'options', value: o, allowed: `an object { ${[...known].join(', ')} }` }]
  const p: ConfigProblem[] = []
  const opts = o as Record<string, unknown>
  for (const k of Object.keys(opts)) if (!known.has(k)) p.push({ field: `options.${k}`, value: opts[k], allowed: `one of ${[...known].join(', ')}` })
  if (what === 'submit' && opts.key !== undefined && (typeof opts.key !== 'string' || opts.key.length === 0)) p.push({ field: 'options.key', value: opts.key, allowed: 'a non-empty string' })
  if (what === 'map' && opts.key !== undefined && (!Array.isArray(opts.key) || opts.key.length !== n || !opts.key.every((k) => typeof k === 'string' && k.length > 0))) {
    p.push({ field: 'options.key', value: opts.key, allowed: `an array of ${n} non-empty strings, one per call` })
  }
  if (opts.batchSize !== undefined && !(Number.isSafeInteger(opts.batchSize) && (opts.batchSize as number) >= 1)) p.push({ field: 'options.batchSize', value: opts.batchSize, allowed: 'a whole number ≥ 1' })
  if (opts.pure !== undefined && typeof opts.pure !== 'boolean') p.push({ field: 'options.pure', value: opts.pure, allowed: 'true or false' })
  if (opts.retries !== undefined && !(Number.isSafeInteger(opts.retries) && (opts.retries as number) >= 0)) p.push({ field: 'options.retries', value: opts.retries, allowed: 'a whole number ≥ 0' })
  if (opts.priority !== undefined && !(typeof opts.priority === 'number' && Number.isFinite(opts.priority))) p.push({ field: 'options.priority', value: opts.priority, allowed: 'a finite number' })
  if (opts.workers !== undefined && !(Array.isArray(opts.workers) && opts.workers.every((w) => typeof w === 'string'))) p.push({ field: 'options.workers', value: opts.workers, allowed: 'an array of worker addresses or names' })
  return p
}

/** The client a submission is for: its Futures, and whether it still holds a key. */
export interface Submitter {
  readonly owner: FutureOwner
  holds(key: string): boolean
}

const isFuture = (v: unknown): v is Future => v instanceof Future

/** Futures in `value`, checked to be the submitter's and still held; `field` names `value` in errors. */
export function futureSlots(by: Submitter, value: unknown, field: string, cancelledOk = false): { value: unknown; slots: Slot<Future>[] } {
  const found = extract(value, isFuture)
  for (const { item, path } of found.slots) {
    const at = `${field}${path.map((p) => `[${JSON.stringify(p)}]`).join('')}`
    // As Dask: work on a Future this client cancelled fails with the cancel itself.
    if (item.owner === by.owner && item.cancelledError) {
      if (cancelledOk) continue
      throw item.cancelledError
    }
    if (item.owner !== by.owner) throw new ArgumentError([{ field: at, value: item.key, allowed: 'a Future of this client (Futures do not move between clients)' }], 'task arguments')
    if (item.released) throw new ArgumentError([{ field: at, value: item.key, allowed: 'a Future that is still held (this one was released)' }], 'task arguments')
    // Its key's value now is another generation's, not what this Future stood for.
    if (!item.current) {
      if (cancelledOk) continue
      throw new ArgumentError([{ field: at, value: item.key, allowed: 'a Future of the key as it is now (this one was made before client.restart(), or before its key was submitted again)' }], 'task arguments')
    }
    if (!by.holds(item.key)) throw new ArgumentError([{ field: at, value: item.key, allowed: 'a Future that is still held (this one was released)' }], 'task arguments')
  }
  return found
}

/** `field` names `args` in errors; `item`: it names `args[0]` (map's items). */
function subTask(by: Submitter, desc: FnDesc, args: unknown[], opts: Omit<SubmitOptions, 'key'>, key: string | undefined, pure: boolean, field: string, item = false): SubTask {
  const { value, slots } = futureSlots(by, args, field)
  const deps: DepRef[] = slots.map(({ item, path }) => ({ key: item.key, path }))
  const label = functionLabel(desc)
  // Caught here, a task that cannot be sent fails at submit, naming the part that cannot go.
  const refuse = (bad = unsendable(item ? (value as unknown[])[0] : value, field)) => {
    if (!bad) return
    throw new ArgumentError([{ field: bad.path, value: bad.what, allowed: 'values structured clone accepts: no functions, symbols or host objects (pass a module function by reference, or compute the value inside the task)' }], 'task arguments')
  }
  if (key !== undefined || !pure) refuse()
  if (key === undefined) {
    if (pure) {
      let bytes: Buffer
      try {
        bytes = serialize([value, deps.map((d) => d.key)])
      } catch (e: any) {
        refuse()
        throw e
      }
      key = `${label}-${createHash('sha256').update(desc.id).update(bytes).digest('hex').slice(0, 32)}`
    } else key = `${label}-${randomUUID()}`
  }
  const sub: SubTask = { key, task: { fn: 'call', func: desc, args: value, deps }, deps: [...new Set(deps.map((d) => d.key))], group: label }
  // Left out when unset: a sub-task crosses to the scheduler, where an undefined is still a field.
  if (opts.priority !== undefined) sub.priority = opts.priority
  if (opts.retries !== undefined) sub.retries = opts.retries
  if (opts.workers !== undefined) sub.workers = opts.workers
  return sub
}

/** submit's task, its arguments and options checked. */
export function submitTask(by: Submitter, fn: TaskFunction, args: unknown, options: SubmitOptions): SubTask {
  const desc = describeFunction(fn)
  if (!Array.isArray(args)) throw new ArgumentError([{ field: 'args', value: args, allowed: 'an array of arguments (Futures may be nested anywhere in it)' }], 'submit arguments')
  const problems = optionProblems(options, 'submit')
  if (problems.length) throw new ArgumentError(problems, 'submit options')
  const pure = options.pure ?? desc.kind === 'module'
  const sub = subTask(by, desc, args, options, options.key, pure, 'args')
  checkKeys([{ key: sub.key, field: options.key === undefined ? 'key (made from the function name)' : 'options.key' }], 'submit options')
  return sub
}

/** map's tasks: one per call of `iterables` (one iterable: `fn(item)`; several: zipped, `fn(a, b, …)`). */
export function mapTasks(by: Submitter, fn: TaskFunction, iterables: unknown[], options: MapOptions): SubTask[] {
  const desc = describeFunction(fn)
  const calls = callsOf(iterables)
  const problems = optionProblems(options, 'map', calls.length)
  if (problems.length) throw new ArgumentError(problems, 'map options')
  const pure = options.pure ?? desc.kind === 'module'
  const one = iterables.length === 1
  // One iterable names the item (`items[i]`), as map always has; several name the call (`calls[i][j]`: its argument j).
  const subs = calls.map((args, i) => subTask(by, desc, args, options, options.key?.[i], pure, one ? `items[${i}]` : `calls[${i}]`, one))
  checkKeys(subs.map((sub, i) => ({ key: sub.key, field: options.key ? `options.key[${i}]` : `key of ${one ? 'items' : 'calls'}[${i}] (made from the function name)` })), 'map options')
  return subs
}

/**
 * gather's Futures (their keys, once each) and how to put their values
 * back in the caller's shape; with `skip` (errors: 'skip'), it waits for
 * them to settle and leaves out those that failed.
 */
export async function gatherPlan(by: Submitter, nested: unknown, skip: boolean): Promise<{ keys: string[]; fill(values: Map<string, unknown>): unknown }> {
  const { value, slots } = futureSlots(by, nested, 'futures', skip)
  if (skip) await by.owner.unlessClosed(Promise.all(slots.map((s) => s.item.settled())))
  const failed = (f: Future) => skip && (f.status === 'error' || f.status === 'cancelled')
  const kept = slots.filter((s) => !failed(s.item))
  return {
    keys: [...new Set(kept.map((s) => s.item.key))],
    fill(got) {
      let out = value
      for (const s of kept) out = place(out, s.path, got.get(s.item.key))
      return kept.length === slots.length ? out : dropAt(out, slots.filter((s) => failed(s.item)).map((s) => s.path))
    },
  }
}
