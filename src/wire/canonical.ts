// Values as canonical text, by type-tagged walk, in two modes:
//
// - 'exact': everything a task depends on, so that two bag specs share a
//   key only when a worker could not tell them apart (-0 is not 0, a Map is
//   not an object, key order and shared references count). JSON is lossy
//   here: Maps, Sets, NaN, -0, Dates and typed arrays all collapse.
// - 'key': the equality rule of shuffle, group, join, frequencies, distinct
//   and foldBy keys, which must agree on every worker after a key has
//   crossed a process (so identity cannot count): primitives by
//   SameValueZero, arrays element by element, plain objects (and class
//   instances, which structured clone makes plain) by their own enumerable
//   properties in any order, Maps and Sets by their entries in any order,
//   Dates by time, typed arrays by element type and bytes. Equal keys, and
//   only they, have the same text.
//
// What has no value to compare or ship (a function, a symbol, a Promise, a
// WeakMap) is refused with the path where it was found.

export type CanonicalMode = 'exact' | 'key'

/** A value that cannot be encoded: what it is and where (a path like `[0].user`). */
export class NotCanonical extends Error {
  constructor(
    readonly what: string,
    readonly path: string,
  ) {
    super(`${what} at ${path || 'the top'}`)
  }
}

export interface CanonicalOptions {
  mode: CanonicalMode
  /** Text to stand for an object (a Future by its key), or undefined to walk it. */
  replace?: (v: object) => string | undefined
  /** What an object is, in words, when it must be refused whatever it holds (a Future as a stored value). */
  refuse?: (v: object) => string | undefined
  /** Takes the text as it is made, in pieces ('exact' only: a hash needs no whole string); the rest is returned. */
  flush?: (piece: string) => void
}

const VIEW_NAMES = new Set(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'DataView'])

/** A step of a path: a property, an index, or a place with no name of its own (a Map's key). */
type Step = string | number | { place: string }

function pathOf(path: Step[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : typeof p === 'object' ? `<${p.place}>` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join('')
}

/** The text of a view's type and bytes: a Buffer is a Uint8Array as a key (both are bytes), not as a task's data. */
function bytesOf(v: ArrayBufferView | ArrayBuffer, mode: CanonicalMode): string {
  const name = v instanceof ArrayBuffer ? 'ArrayBuffer' : Buffer.isBuffer(v) ? (mode === 'key' ? 'Uint8Array' : 'Buffer') : VIEW_NAMES.has(v.constructor?.name) ? v.constructor.name : 'Uint8Array'
  const b = v instanceof ArrayBuffer ? Buffer.from(v) : Buffer.from(v.buffer, v.byteOffset, v.byteLength)
  return `${name}(${b.toString('base64')})`
}

/** What cannot be encoded, in words; undefined for what can. */
function refused(v: unknown): string | undefined {
  if (typeof v === 'function') return `a function${v.name ? ` (${v.name})` : ''}`
  if (typeof v === 'symbol') return `a symbol (${String(v.description)})`
  if (v instanceof Promise) return 'a Promise'
  if (v instanceof WeakMap || v instanceof WeakSet || v instanceof WeakRef) return `a ${(v as object).constructor.name}`
  return undefined
}

const FLUSH_AT = 1 << 16

/** The canonical text of `value` (after what `flush` took); throws NotCanonical for what it cannot encode. */
export function canonical(value: unknown, options: CanonicalOptions): string {
  const { mode, replace, refuse } = options
  const flush = mode === 'exact' ? options.flush : undefined
  const exact = mode === 'exact'
  // One string grown by +=, which V8 keeps as a rope: far cheaper than pieces in an array.
  let out = ''
  const path: Step[] = []
  // 'exact': every object seen, so a second reference (or a cycle) is written as one. 'key': the objects above, for cycles.
  const seen = new Map<object, number>()
  const walk = (v: unknown): void => {
    switch (typeof v) {
      case 'string':
        out += `s${v.length}:${v}`
        return
      case 'number':
        // String(n) is the shortest text that reads back as n: lossless for every double but -0.
        out += v === 0 && exact && 1 / v < 0 ? 'n-0;' : `n${v};`
        return
      case 'bigint':
        out += `i${v};`
        return
      case 'boolean':
        out += v ? 'T' : 'F'
        return
      case 'undefined':
        out += 'U'
        return
    }
    if (v === null) {
      out += 'N'
      return
    }
    const o = v as object
    const bad = refused(v) ?? refuse?.(o)
    if (bad) throw new NotCanonical(bad, pathOf(path))
    const stood = replace?.(o)
    if (stood !== undefined) {
      out += `R${stood.length}:${stood}`
      return
    }
    const ref = seen.get(o)
    if (ref !== undefined) {
      if (!exact) throw new NotCanonical('a reference to a value that contains it (a cycle)', pathOf(path))
      out += `@${ref};`
      return
    }
    seen.set(o, seen.size)
    walkObject(o)
    if (!exact) seen.delete(o)
    if (flush && out.length > FLUSH_AT) {
      flush(out)
      out = ''
    }
  }
  const at = (p: Step, v: unknown) => {
    path.push(p)
    walk(v)
    path.pop()
  }
  // Parts whose order does not count (as a key): each part as its own text, the texts sorted.
  const parts = (n: number, part: (i: number) => void): void => {
    if (exact) {
      for (let i = 0; i < n; i++) part(i)
      return
    }
    const before = out
    const texts: string[] = []
    for (let i = 0; i < n; i++) {
      out = ''
      part(i)
      texts.push(out)
    }
    out = before + texts.sort().join('')
  }
  const walkObject = (o: object): void => {
    if (Array.isArray(o)) {
      out += `[${o.length};`
      for (let i = 0; i < o.length; i++) {
        if (exact && !(i in o)) out += 'h'
        else at(i, o[i])
      }
      out += ']'
    } else if (o instanceof Date) out += `D${o.getTime()};`
    else if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer) out += `B${bytesOf(o, mode)}`
    else if (o instanceof RegExp) out += `X${o.source.length}:${o.source}${o.flags};`
    else if (o instanceof Map) {
      const entries = [...o]
      out += `M${entries.length};`
      parts(entries.length, (i) => {
        at({ place: `Map key ${i}` }, entries[i][0])
        at({ place: `Map value ${i}` }, entries[i][1])
      })
    } else if (o instanceof Set) {
      const members = [...o]
      out += `S${members.length};`
      parts(members.length, (i) => at({ place: `Set member ${i}` }, members[i]))
    } else if (o instanceof Number || o instanceof String || o instanceof Boolean || o instanceof BigInt) {
      out += 'b'
      walk(o.valueOf())
    } else {
      // A plain object, or what structured clone makes of a class instance: its own enumerable properties.
      const keys = Object.keys(o)
      const proto = Object.getPrototypeOf(o)
      if (keys.length === 0 && proto !== null && proto !== Object.prototype && !(o instanceof Error)) {
        // Its state is elsewhere (private fields, internal slots: a URL): it would reach a worker as {}.
        throw new NotCanonical(`an instance of ${proto.constructor?.name || 'a class'} with no own enumerable properties (a worker would receive it as {})`, pathOf(path))
      }
      out += o instanceof Error ? `E${o.name.length}:${o.name}${o.message.length}:${o.message}${keys.length};` : `O${keys.length};`
      parts(keys.length, (i) => {
        out += `${keys[i].length}:${keys[i]}`
        at(keys[i], (o as Record<string, unknown>)[keys[i]])
      })
    }
  }
  walk(value)
  return out
}
