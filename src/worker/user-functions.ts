// Turns a task's function description into a callable, once per worker:
// modules are imported (ESM or CommonJS, by file: URL or package name) and
// shipped sources compiled, each cached by its id. An import has a time
// limit: a module whose top-level await never settles fails the tasks that
// need it, instead of hanging them, while other modules go on loading.

import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isOwnTaskError, SpillwayError } from '../base/errors'
import { BUILTIN_FUNCTIONS, type FnDesc } from '../wire/functions'
import type { CollectSpec, SplitMarker } from '../wire/bag'
import { runAggregate, runPartition, type FunctionLoader } from './collections/bag/partition'
import type { Fn } from './collections/bag/reducers'
import { currentStore, taskContext, type TaskStore } from './context'
import type { ShuffleService } from './collections/shuffle/service'
import { runCollect, runSplit } from './collections/shuffle/tasks'
import { runRechunkCollect, runRechunkSplit } from './collections/rechunk/rechunk'
import { runFrameBoundaries, runFrameCollect, runFrameJoin, runFrameSample, runFrameSplit } from './collections/frame/shuffle-tasks'
import { runFrameCombine, runFramePartition, runFrameWrite } from './collections/frame/tasks'
import { runFromItems, runMapBatches, runToBag } from './collections/frame/batches'
import { isTypeScriptSyntaxError, prepareTypeScript } from './typescript'

export type Callable = (...args: unknown[]) => unknown

// `import()` written so that TypeScript's CommonJS output keeps it an import
// (a require could not load an ES module).
const importModule = new Function('s', 'return import(s)') as (s: string) => Promise<Record<string, unknown>>

async function importSpecifier(specifier: string): Promise<Record<string, unknown>> {
  try {
    return await importModule(specifier)
  } catch (e: any) {
    const notFound = e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND'
    if (!notFound || specifier.startsWith('file:')) throw e
    // A package name: resolve it from where the program runs, as the caller would.
    const resolved = createRequire(join(process.cwd(), 'noop.js')).resolve(specifier)
    return importModule(pathToFileURL(resolved).href)
  }
}

/** How long a module may take to import on a worker before its tasks fail (the importTimeout option). */
export const IMPORT_TIMEOUT_MS = 60_000

function importTimedOut(specifier: string, limitMs: number): SpillwayError {
  return new SpillwayError(
    'ERR_SPILLWAY_TIMEOUT',
    `module ${specifier} did not finish loading on the worker within ${limitMs / 1000} s (importTimeout): its top-level code has not settled (a top-level await that never resolves?). The tasks that need it fail; other modules are not affected. Fix the module, or raise importTimeout if it is only slow`,
    { module: specifier, timeoutMs: limitMs },
  )
}

/** One module's import, shared by every task that needs it (a second import() of it would only wait on the same evaluation). */
interface Importing {
  started: number
  settled: boolean
  module: Promise<Record<string, unknown>>
}

/** What spillway's own task kinds need of their worker. */
export interface NativeServices {
  shuffle?: ShuffleService
  memoryLimit: number
}

export class UserFunctions {
  readonly #cache = new Map<string, Promise<Callable>>()
  readonly #imports = new Map<string, Importing>()

  constructor(
    private readonly natives: NativeServices = { memoryLimit: Infinity },
    private readonly importTimeoutMs = IMPORT_TIMEOUT_MS,
  ) {}

  /** The module, or ERR_SPILLWAY_TIMEOUT once its import has taken `importTimeoutMs` (counted from its first try). */
  #import(specifier: string): Promise<Record<string, unknown>> {
    let entry = this.#imports.get(specifier)
    if (!entry) {
      const e: Importing = { started: performance.now(), settled: false, module: importSpecifier(specifier) }
      this.#imports.set(specifier, (entry = e))
      e.module.then(
        () => (e.settled = true),
        // A module that failed may be fixed on disk: imported afresh next time.
        () => this.#imports.get(specifier) === e && this.#imports.delete(specifier),
      )
    }
    if (entry.settled) return entry.module
    const left = this.importTimeoutMs - (performance.now() - entry.started)
    if (left <= 0) return Promise.reject(importTimedOut(specifier, this.importTimeoutMs))
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(importTimedOut(specifier, this.importTimeoutMs)), left)))
    return Promise.race([entry.module, late]).finally(() => clearTimeout(timer))
  }

  get memoryLimit(): number {
    return this.natives.memoryLimit
  }

  /** A shuffle output's items (a bag partition whose source is a shuffle). */
  async collect(spec: CollectSpec, markers: SplitMarker[], load: FunctionLoader = this): Promise<unknown[]> {
    if (!this.natives.shuffle) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', 'a shuffle output needs a worker with a data server')
    return runCollect(load, this.natives.shuffle, this.natives.memoryLimit, spec, ...markers) as Promise<unknown[]>
  }

  /** These functions for one task of spillway's own kinds, run without AsyncLocalStorage (context.ts runSync). */
  forTask(task: TaskStore | undefined): FunctionLoader {
    const load: FunctionLoader = {
      get: (desc) => this.get(desc) as Promise<Fn>,
      collect: (spec, markers) => this.collect(spec, markers, load),
      memoryLimit: this.memoryLimit,
      task,
    }
    return load
  }

  get(desc: FnDesc): Promise<Callable> {
    let p = this.#cache.get(desc.id)
    if (!p) {
      p = this.#load(desc)
      this.#cache.set(desc.id, p)
      // A module that failed to load may be fixed on disk: try again next time.
      p.catch(() => this.#cache.delete(desc.id))
    }
    return p
  }

  async #load(desc: FnDesc): Promise<Callable> {
    if (desc.kind === 'source') {
      try {
        return new Function(`"use strict"; return (${desc.source})`)() as Callable
      } catch (e: any) {
        throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `shipped function ${desc.label} does not compile on its own (${e?.message}); put it in a module and pass { module, name }`, { function: desc.label }, { cause: e })
      }
    }
    if (desc.kind === 'native') return nativeCallable(desc.op, this, this.natives)
    if (desc.kind !== 'module') throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `no user function of kind ${(desc as FnDesc).kind}`)
    let mod: Record<string, unknown>
    prepareTypeScript(desc.specifier)
    try {
      mod = await this.#import(desc.specifier)
    } catch (e: any) {
      if (e instanceof SpillwayError && e.code === 'ERR_SPILLWAY_TIMEOUT') throw e
      const code = e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND' ? 'ERR_SPILLWAY_MODULE_NOT_FOUND' : isTypeScriptSyntaxError(e) ? 'ERR_SPILLWAY_TYPESCRIPT' : 'ERR_SPILLWAY_MODULE_LOAD'
      throw new SpillwayError(code, `module ${desc.specifier} could not be imported on the worker: ${e?.message ?? e}`, { module: desc.specifier }, { cause: e })
    }
    let fn = mod[desc.name]
    // A CommonJS module's exports arrive as the default export.
    if (fn === undefined && mod.default && typeof mod.default === 'object') fn = (mod.default as Record<string, unknown>)[desc.name]
    if (typeof fn !== 'function') {
      const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function')
      throw new SpillwayError(
        'ERR_SPILLWAY_EXPORT_NOT_FOUND',
        `module ${desc.specifier} has no function export ${JSON.stringify(desc.name)}` + (fn === undefined ? '' : ` (it is ${typeof fn})`) + `; its function exports: ${names.join(', ') || 'none'}`,
        { module: desc.specifier, name: desc.name },
      )
    }
    return fn as Callable
  }
}

/** A function the worker has itself: a built-in, or one of spillway's own task kinds. */
function nativeCallable(op: string, load: UserFunctions, natives: NativeServices): Callable {
  // Called in runSync: the task's context is read here, before any await, and given to the user's functions.
  if (op === 'bag.partition') return (spec, ...inputs) => runPartition(load.forTask(currentStore()), spec as never, ...inputs)
  if (op === 'bag.aggregate') return (spec, ...partials) => runAggregate(load.forTask(currentStore()), spec as never, ...partials)
  if (op === 'frame.partition') return (plan, ...inputs) => runFramePartition(plan as never, ...inputs)
  if (op === 'frame.combine') return (plan, ...inputs) => runFrameCombine(plan as never, ...inputs)
  if (op === 'frame.mapBatches') return (spec, input) => runMapBatches(load.forTask(currentStore()), spec as never, input)
  if (op === 'frame.toBag') return (spec, input) => runToBag(spec as never, input)
  if (op === 'frame.fromItems') return (spec, ...inputs) => runFromItems(spec as never, ...inputs)
  if (op === 'frame.join') return (plan, ...inputs) => runFrameJoin(plan as never, ...inputs)
  if (op === 'frame.sample') return (plan, ...inputs) => runFrameSample(plan as never, ...inputs)
  if (op === 'frame.boundaries') return (plan, ...inputs) => runFrameBoundaries(plan as never, ...inputs)
  if (op === 'frame.write') return (plan, input) => runFrameWrite(plan as never, input)
  if (op === 'shuffle.split' || op === 'rechunk.split' || op === 'rechunk.collect' || op === 'frame.split' || op === 'frame.collect') {
    const service = natives.shuffle
    if (!service) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `${op} needs a worker with a data server`)
    if (op === 'rechunk.split') return (spec, chunk) => runRechunkSplit(service, taskContext().key, spec as never, chunk)
    if (op === 'rechunk.collect') return (spec, ...markers) => runRechunkCollect(service, spec as never, ...(markers as never[]))
    if (op === 'frame.split') return (spec, ...inputs) => runFrameSplit(service, taskContext().key, spec as never, ...inputs)
    if (op === 'frame.collect') return (spec, ...markers) => runFrameCollect(service, spec as never, ...(markers as never[]))
    return (spec, ...inputs) => runSplit(load.forTask(currentStore()), service, taskContext().key, spec as never, ...inputs)
  }
  const fn = BUILTIN_FUNCTIONS.get(op)
  if (!fn) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `no native function ${JSON.stringify(op)} on this worker`, { op })
  return fn as Callable
}

/** Characters of a user error's message that travel; the rest would only bloat every reply and log line. */
export const MAX_ERROR_MESSAGE = 4000
/** Characters of its stack after the message: V8 keeps 10 frames, so this cuts only stacks a user made up. */
const MAX_STACK_FRAMES = 16_000

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters cut)`
}

function textOf(v: unknown): string {
  try {
    return typeof v === 'string' ? v : String(v)
  } catch {
    return '(unprintable)'
  }
}

/**
 * A thrown value as the error a Future rejects with, the remote stack kept.
 * Its code is always ERR_SPILLWAY_TASK: a user's own `code` travels in
 * `remote.code`, so an error that happens to be named like one of ours
 * (ERR_SPILLWAY_MISSING_DEP) can never steer the scheduler.
 */
export function taskFailure(e: unknown, key: string, desc: FnDesc | undefined): { code: string; message: string; remote?: Record<string, unknown>; missing?: string[] } {
  if (isOwnTaskError(e)) {
    const missing = e.details.missing
    // A shuffle output whose shards are gone names the inputs to run again (ERR_SPILLWAY_MISSING_DEP).
    return { code: e.code, message: `task ${JSON.stringify(key)}${desc ? ` (${desc.label})` : ''} failed: ${e.message}`, ...(Array.isArray(missing) ? { missing } : {}) }
  }
  const err = e instanceof Error ? e : new Error(textOf(e))
  const name = clip(textOf(err.name), 200)
  const full = textOf(err.message)
  const own = clip(full, MAX_ERROR_MESSAGE)
  let message = `task ${JSON.stringify(key)}${desc ? ` (${desc.label})` : ''} failed: ${name}: ${own}`
  if (desc?.kind === 'source' && err instanceof ReferenceError) {
    message +=
      '. A shipped function runs on the worker with none of the variables around it where it was written; this one seems to use one of its enclosing scope. Pass what it needs as arguments, or put it in a module and submit { module, name }'
  }
  const remote: { name: string; message: string; stack?: string; code?: string | number } = { name, message: own, stack: stackOf(err, full, own) }
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' || typeof code === 'number') remote.code = typeof code === 'string' ? clip(code, 200) : code
  return { code: 'ERR_SPILLWAY_TASK', message, remote }
}

/** The stack with its copy of the message clipped as the message is, and its frames kept. */
function stackOf(err: Error, full: string, own: string): string | undefined {
  let stack: string
  try {
    if (typeof err.stack !== 'string') return undefined
    stack = err.stack
  } catch {
    return undefined
  }
  const at = full.length > own.length ? stack.indexOf(full) : -1
  if (at >= 0) stack = stack.slice(0, at) + own + stack.slice(at + full.length)
  return clip(stack, MAX_ERROR_MESSAGE + MAX_STACK_FRAMES)
}
