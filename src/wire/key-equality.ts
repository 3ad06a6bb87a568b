// When two keys of a shuffle, group, join, frequencies, distinct or foldBy
// are the same key. A key crosses processes (split on one worker, grouped
// on another), so identity cannot count: keys are equal by value, the rule
// of wire/canonical.ts's 'key' mode — primitives by SameValueZero (NaN
// equals NaN, -0 equals 0; 1, 1n, '1' and true are four keys), arrays
// element by element, plain objects by their own enumerable properties in
// any order, Maps and Sets by their entries in any order, Dates by time,
// typed arrays by element type and bytes. A key holding a function or a
// symbol has no such value and is refused by name.

import { inspect } from 'node:util'
import { ownTaskError } from '../base/errors'
import { canonical, NotCanonical } from './canonical'

/** A key that a Map compares by value as it is (SameValueZero); a symbol is not one. */
export function isPrimitiveKey(k: unknown): boolean {
  return k === null || (typeof k !== 'object' && typeof k !== 'function' && typeof k !== 'symbol')
}

/** A key as short text for a message (a function by its name, never its source). */
export function showKey(k: unknown): string {
  const text = typeof k === 'string' ? JSON.stringify(k) : inspect(k, { depth: 3, breakLength: Infinity, maxArrayLength: 10, maxStringLength: 80 })
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/**
 * canonical()'s text of a flat array of primitives (the usual composite key,
 * `[user, day]`), made without its walk; undefined for any other array.
 */
export function tupleText(k: unknown[]): string | undefined {
  let out = `[${k.length};`
  for (let i = 0; i < k.length; i++) {
    const v = k[i]
    switch (typeof v) {
      case 'string':
        out += `s${v.length}:${v}`
        break
      case 'number':
      case 'bigint':
        out += `${typeof v === 'number' ? 'n' : 'i'}${v};`
        break
      case 'boolean':
        out += v ? 'T' : 'F'
        break
      case 'undefined':
        out += 'U'
        break
      default:
        if (v !== null) return undefined
        out += 'N'
    }
  }
  return `${out}]`
}

/**
 * The text two equal non-primitive keys share, and no unequal key has.
 * `role` says whose key it is (`groupBy key`), for the error.
 */
export function keyText(k: unknown, role: string): string {
  try {
    return (Array.isArray(k) && tupleText(k)) || canonical(k, { mode: 'key' })
  } catch (e) {
    if (!(e instanceof NotCanonical)) throw e
    throw ownTaskError(
      'ERR_SPILLWAY_UNHASHABLE_KEY',
      `the ${role} ${showKey(k)} cannot be compared by value: it holds ${e.what}${e.path ? ` at ${e.path}` : ''}. Keys are compared by value (strings, numbers, bigints, booleans, null, undefined, Dates, arrays, plain objects, Maps, Sets, typed arrays): return one of those from the key function`,
      { role, key: showKey(k), at: e.path },
    )
  }
}

interface Entry<V> {
  /** The first key seen of its kind: it stands for every equal key in outputs. */
  key: unknown
  value: V
}

/**
 * A Map keyed by the rule above. Primitive keys go straight into a Map;
 * object keys by their canonical text in a table of their own, so that a
 * user's string never meets a canonical one. Entries come out in the order
 * their keys were first seen.
 */
export class KeyTable<V> {
  readonly #primitive = new Map<unknown, Entry<V>>()
  readonly #objects = new Map<string, Entry<V>>()
  readonly #entries: Entry<V>[] = []
  // The text find() made last, for the add() that usually follows it.
  #lastKey: unknown
  #lastText = ''

  constructor(
    /** Whose keys these are, for errors: 'groupBy key', 'distinct item'. */
    readonly role: string,
  ) {}

  get size(): number {
    return this.#entries.length
  }

  get(k: unknown): V | undefined {
    return this.find(k)?.value
  }

  has(k: unknown): boolean {
    return this.find(k) !== undefined
  }

  /** The entry of `k`, made with `make()` the first time `k` (or a key equal to it) is seen. */
  entry(k: unknown, make: () => V): Entry<V> {
    return this.find(k) ?? this.add(k, make())
  }

  /** The entry of a key equal to `k`, if any. */
  find(k: unknown): Entry<V> | undefined {
    if (isPrimitiveKey(k)) return this.#primitive.get(k)
    this.#lastKey = k
    this.#lastText = keyText(k, this.role)
    return this.#objects.get(this.#lastText)
  }

  /** A new entry for `k`, which `find` did not find (callers that group call find, then add: no closure per item). */
  add(k: unknown, value: V): Entry<V> {
    const e = { key: k, value }
    if (isPrimitiveKey(k)) this.#primitive.set(k, e)
    else this.#objects.set(this.#lastKey === k ? this.#lastText : keyText(k, this.role), e)
    this.#entries.push(e)
    return e
  }

  set(k: unknown, v: V): void {
    this.entry(k, () => v).value = v
  }

  *[Symbol.iterator](): IterableIterator<[unknown, V]> {
    for (const e of this.#entries) yield [e.key, e.value]
  }

  keys(): unknown[] {
    return this.#entries.map((e) => e.key)
  }
}
