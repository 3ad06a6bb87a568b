// Turns a task's function description into a callable, once per worker:
// modules are imported (ESM or CommonJS, by file: URL or package name) and
// shipped sources compiled, each cached by its id.

import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SpillwayError } from '../base/errors'
import { BUILTIN_FUNCTIONS, type FnDesc } from '../wire/functions'
import { runAggregate, runPartition } from './bag-partition'

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

export class UserFunctions {
  readonly #cache = new Map<string, Promise<Callable>>()

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
        throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `shipped function ${desc.label} does not compile on its own (${e?.message}); put it in a module and pass { module, name }`, { function: desc.label })
      }
    }
    if (desc.kind === 'native') return nativeCallable(desc.op, this)
    if (desc.kind !== 'module') throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `no user function of kind ${(desc as FnDesc).kind}`)
    let mod: Record<string, unknown>
    try {
      mod = await importSpecifier(desc.specifier)
    } catch (e: any) {
      const code = e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND' ? 'ERR_SPILLWAY_MODULE_NOT_FOUND' : 'ERR_SPILLWAY_MODULE_LOAD'
      throw new SpillwayError(code, `module ${desc.specifier} could not be imported on the worker: ${e?.message ?? e}`, { module: desc.specifier })
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
function nativeCallable(op: string, load: UserFunctions): Callable {
  if (op === 'bag.partition') return (spec, ...inputs) => runPartition(load, spec as never, ...inputs)
  if (op === 'bag.aggregate') return (spec, ...partials) => runAggregate(load, spec as never, ...partials)
  const fn = BUILTIN_FUNCTIONS.get(op)
  if (!fn) throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `no native function ${JSON.stringify(op)} on this worker`, { op })
  return fn as Callable
}

/** A thrown value as the error a Future rejects with, the remote stack kept. */
export function taskFailure(e: unknown, key: string, desc: FnDesc | undefined) {
  const err = e instanceof Error ? e : new Error(String(e))
  let message = `task ${JSON.stringify(key)}${desc ? ` (${desc.label})` : ''} failed: ${err.name}: ${err.message}`
  if (desc?.kind === 'source' && err instanceof ReferenceError) {
    message +=
      '. A shipped function runs on the worker with none of the variables around it where it was written; this one seems to use one of its enclosing scope. Pass what it needs as arguments, or put it in a module and submit { module, name }'
  }
  return {
    code: (err as any).code && String((err as any).code).startsWith('ERR_SPILLWAY_') ? String((err as any).code) : 'ERR_SPILLWAY_TASK',
    message,
    remote: { name: err.name, message: err.message, stack: err.stack },
  }
}
