// What a task runs, as the workers receive it: a module export they import
// (once per worker), or the source text of a self-contained function. The
// checks here run at submit, so a function that cannot run on a worker is
// refused in the caller's stack, naming why.

import { createHash } from 'node:crypto'
import { isAbsolute } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ArgumentError } from '../base/errors'

/** Carries a reference's function type for TypeScript; never set at run time. */
declare const exportType: unique symbol

/**
 * A module export the workers import: `{ module, name = 'default' }`. `F`,
 * the export's type (from `taskModule`), types the calls made with it; a
 * plain `{ module, name }` is `ModuleRef<any>`.
 */
export interface ModuleRef<F = any> {
  module: string | URL
  name?: string
  readonly [exportType]?: F
}

export type TaskFunction = ((...args: any[]) => unknown) | ModuleRef

/** A function as sent to a worker. `id` keys its cache there. */
export type FnDesc =
  | { kind: 'module'; id: string; specifier: string; name: string; label: string }
  | { kind: 'source'; id: string; source: string; label: string }
  | { kind: 'native'; id: string; op: string; label: string }

const sources = new WeakMap<Function, FnDesc>()

function problem(value: unknown, allowed: string, field = 'fn'): ArgumentError {
  return new ArgumentError([{ field, value: typeof value === 'function' ? `[function ${value.name || 'anonymous'}]` : value, allowed }], 'task function')
}

const ALLOWED = 'a self-contained function, or a module reference { module: absolute path | file: URL | package name, name?: export name }'

/**
 * The specifier workers import `m` by: a file: URL, an absolute path (as a
 * file: URL) or a package name. A relative path is refused: the worker
 * would resolve it from itself, not from the caller's file.
 */
export function moduleSpecifier(m: unknown, field: string, what = 'task function'): string {
  const refuse = (value: unknown, allowed: string) => new ArgumentError([{ field, value, allowed }], what)
  if (m instanceof URL) {
    if (m.protocol !== 'file:') throw refuse(m.href, 'a file: URL (workers import from their own disk)')
    return m.href
  }
  if (typeof m === 'string' && m.length > 0) {
    if (m.startsWith('file:')) return m
    if (isAbsolute(m)) return pathToFileURL(m).href
    if (m.startsWith('.')) throw refuse(m, 'an absolute path, a file: URL or a package name: a relative path would be resolved from the worker, not from your file (use new URL(path, import.meta.url) or path.resolve)')
    return m
  }
  throw refuse(m, 'an absolute path, a file: URL or a package name')
}

function moduleDesc(ref: ModuleRef): FnDesc {
  const specifier = moduleSpecifier(ref.module, 'fn.module')
  const name = ref.name ?? 'default'
  if (typeof name !== 'string' || name.length === 0) throw problem(name, 'the name of an export (a non-empty string)', 'fn.name')
  const id = `m:${specifier}#${name}`
  return { kind: 'module', id, specifier, name, label: name === 'default' ? lastSegment(specifier) : name }
}

function lastSegment(specifier: string): string {
  const s = specifier.replace(/\.[cm]?[jt]s$/, '')
  return s.slice(s.lastIndexOf('/') + 1) || s
}

// `async foo(a) {}` and `foo(a) {}` (object method shorthand) are not
// expressions; prefixed with `function` they are, and mean the same when the
// body does not use `super`.
const SHORTHAND = /^(async\s+)?(\*?\s*)([A-Za-z_$][\w$]*)\s*\(/

function sourceDesc(fn: Function): FnDesc {
  const cached = sources.get(fn)
  if (cached) return cached
  let source = Function.prototype.toString.call(fn)
  const name = fn.name || 'anonymous'
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) {
    throw problem(fn, `${ALLOWED}; ${name.startsWith('bound ') ? 'a bound function' : 'a native function'} has no source to ship`)
  }
  if (/^class\b/.test(source)) throw problem(fn, `${ALLOWED}; a class is not a task function`)
  const isExpression = /^(async\s+)?function\b/.test(source) || /^(async\s*)?(\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>/.test(source)
  if (!isExpression) {
    const m = SHORTHAND.exec(source)
    if (!m || m[3] === 'function') throw problem(fn, `${ALLOWED}; this one's source does not parse on its own`)
    if (/\bsuper\b/.test(source)) throw problem(fn, `${ALLOWED}; a method that uses super cannot be shipped`)
    if (m[3] === 'get' || m[3] === 'set') throw problem(fn, `${ALLOWED}; an accessor cannot be shipped`)
    source = `${m[1] ?? ''}function ${m[2] ?? ''}${m[3]}${source.slice(m[0].length - 1)}`
  }
  const id = `s:${createHash('sha256').update(source).digest('hex').slice(0, 24)}`
  const desc: FnDesc = { kind: 'source', id, source, label: name }
  sources.set(fn, desc)
  return desc
}

/**
 * Built-ins a user reaches for as a step (`bag.map(JSON.parse)`): they have
 * no source to ship, so they travel by name and the worker takes its own.
 */
export const BUILTIN_FUNCTIONS: ReadonlyMap<string, Function> = new Map<string, Function>([
  ['JSON.parse', JSON.parse],
  ['JSON.stringify', JSON.stringify],
  ['Number', Number],
  ['String', String],
  ['Boolean', Boolean],
  ['parseFloat', parseFloat],
  ['parseInt', parseInt],
])

const builtinNames = new Map([...BUILTIN_FUNCTIONS].map(([name, fn]) => [fn, name]))

/** A function the workers run natively, by name (built-ins and spillway's own task kinds). */
export function nativeFunction(op: string, label = op): FnDesc {
  return { kind: 'native', id: `n:${op}`, op, label }
}

/** Checks a task function and describes it for the workers. */
export function describeFunction(fn: unknown): FnDesc {
  if (typeof fn === 'function' && builtinNames.has(fn)) return nativeFunction(builtinNames.get(fn)!)
  if (typeof fn === 'function') return sourceDesc(fn)
  if (fn !== null && typeof fn === 'object' && 'module' in fn) return moduleDesc(fn as ModuleRef)
  throw problem(fn, ALLOWED)
}

/** The label a function's tasks are grouped under (the dashboard, keys). */
export function functionLabel(desc: FnDesc): string {
  return desc.label.replace(/[^\w.$-]/g, '_') || 'task'
}
