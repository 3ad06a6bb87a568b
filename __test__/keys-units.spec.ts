// Property tests of the key rules, on seeded random nested values: keys are
// equal by value (wire/key-equality.ts) exactly when their canonical text
// and hash agree, whatever crossing a process does to them; a bag spec's
// task key changes with anything a worker could tell apart; and the sort
// order is total, with its ties exactly the equal keys.
import test from 'ava'
import { deserialize, serialize } from 'node:v8'
import { isDeepStrictEqual } from 'node:util'
import { hashOf } from '../src/bag/graph'
import { hashKey } from '../src/wire/bag'
import { KeyTable, keyText, tupleText } from '../src/wire/key-equality'
import { canonical } from '../src/wire/canonical'
import { compareKeys, keyOrder } from '../src/wire/order'
import { unserializableReason } from '../src/wire/values'

function prng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

const PRIMITIVES: unknown[] = [0, -0, 1, 1n, '1', 'a', '', true, false, null, undefined, NaN, 2.5, -7, 2n ** 70n, 'é', Infinity]

class Point {
  constructor(
    public x: unknown,
    public y: unknown,
  ) {}
}

/** A random key: primitives, arrays, objects, Maps, Sets, Dates, typed arrays, class instances, nested. */
function randomValue(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * (depth > 2 ? 1 : 10))
  const small = () => Math.floor(r() * 3)
  switch (pick) {
    case 0:
      return PRIMITIVES[Math.floor(r() * PRIMITIVES.length)]
    case 1:
      return Array.from({ length: small() }, () => randomValue(r, depth + 1))
    case 2: {
      const o: Record<string, unknown> = {}
      for (let i = small(); i > 0; i--) o[['a', 'b', 'c'][Math.floor(r() * 3)]] = randomValue(r, depth + 1)
      return o
    }
    case 3:
      return new Map(Array.from({ length: small() }, () => [randomValue(r, depth + 1), randomValue(r, depth + 1)]))
    case 4:
      return new Set(Array.from({ length: small() }, () => randomValue(r, depth + 1)))
    case 5:
      return new Date(small() * 1000)
    case 6:
      return [Uint8Array, Int8Array, Float64Array][small()].from({ length: small() }, () => small())
    case 7:
      return new Point(randomValue(r, depth + 1), small())
    case 8:
      return Buffer.from([small(), small()].slice(0, small()))
    default:
      return [small(), PRIMITIVES[Math.floor(r() * PRIMITIVES.length)]]
  }
}

/** A value equal to `v` by the rule, written differently: keys reordered, entries reordered, -0 for 0, class instances plain, Buffers as Uint8Arrays. */
function variant(v: unknown, r: () => number): unknown {
  if (typeof v === 'number' && v === 0) return r() < 0.5 ? -0 : 0
  if (v === null || typeof v !== 'object') return v
  const shuffle = <T>(xs: T[]): T[] => xs.map((x) => [r(), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x)
  if (Array.isArray(v)) return v.map((x) => variant(x, r))
  if (v instanceof Date) return new Date(v.getTime())
  if (Buffer.isBuffer(v)) return new Uint8Array(v)
  if (ArrayBuffer.isView(v)) return (v as any).slice()
  if (v instanceof Map) return new Map(shuffle([...v]).map(([k, x]) => [variant(k, r), variant(x, r)]))
  if (v instanceof Set) return new Set(shuffle([...v]).map((x) => variant(x, r)))
  const o: Record<string, unknown> = {}
  for (const k of shuffle(Object.keys(v))) o[k] = variant((v as Record<string, unknown>)[k], r)
  return o
}

/** The documented rule, written out plainly: the reference the canonical text must agree with. */
function equalByRule(a: unknown, b: unknown): boolean {
  const prim = (x: unknown) => x === null || typeof x !== 'object'
  if (prim(a) || prim(b)) return prim(a) && prim(b) && (a === b || (a !== a && b !== b))
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equalByRule(x, b[i]))
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && equalByRule(a.getTime(), b.getTime())
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    const type = (x: any) => (Buffer.isBuffer(x) ? 'Uint8Array' : x.constructor.name)
    return ArrayBuffer.isView(a) && ArrayBuffer.isView(b) && type(a) === type(b) && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false
    const rest = [...b]
    return [...a].every(([k, v]) => {
      const i = rest.findIndex(([k2, v2]) => equalByRule(k, k2) && equalByRule(v, v2))
      return i >= 0 && rest.splice(i, 1).length === 1
    })
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false
    const rest = [...b]
    return [...a].every((x) => {
      const i = rest.findIndex((y) => equalByRule(x, y))
      return i >= 0 && rest.splice(i, 1).length === 1
    })
  }
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && equalByRule((a as any)[k], (b as any)[k]))
}

/** What a worker receives of a value: the v8 serialization tasks travel in. */
const roundTrip = (v: unknown) => deserialize(serialize(v))

const textOf = (k: unknown) => (k === null || (typeof k !== 'object' && typeof k !== 'function') ? `p:${typeof k}:${String(k === 0 ? 0 : k)}` : `o:${keyText(k, 'key')}`)

test('key equality: equal by the rule ⇔ same canonical text ⇔ one KeyTable entry; equal keys hash alike (5 000 seeded pairs)', (t) => {
  const r = prng(32)
  let equalPairs = 0
  let unequalPairs = 0
  for (let i = 0; i < 5000; i++) {
    const a = randomValue(r)
    const b = r() < 0.5 ? variant(a, r) : randomValue(r)
    const equal = equalByRule(a, b)
    equal ? equalPairs++ : unequalPairs++
    const same = textOf(a) === textOf(b)
    if (same !== equal) t.fail(`pair ${i}: equal by the rule ${equal}, same text ${same}: ${String(serialize([a, b]).toString('hex')).slice(0, 200)}`)
    if (equal && hashKey(a) !== hashKey(b)) t.fail(`pair ${i}: equal keys hash differently`)
    const table = new KeyTable<number>('key')
    table.entry(a, () => 0).value++
    table.entry(b, () => 0).value++
    t.is(table.size, equal ? 1 : 2)
    t.is(table.keys()[0], a, 'the first key seen stands for its entry')
  }
  // Both sides of the rule were exercised, many times.
  t.true(equalPairs > 1500 && unequalPairs > 1500, `${equalPairs} equal, ${unequalPairs} unequal`)
})

test('the fast text of flat tuples is canonical()\'s own, so a tuple key means one thing whichever path made its text', (t) => {
  const r = prng(5)
  let flat = 0
  for (let i = 0; i < 3000; i++) {
    const tuple = Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.8 ? PRIMITIVES[Math.floor(r() * PRIMITIVES.length)] : [1]))
    const fast = tupleText(tuple)
    if (fast === undefined) t.true(tuple.some((x) => Array.isArray(x)))
    else {
      flat++
      t.is(fast, canonical(tuple, { mode: 'key' }))
    }
  }
  t.true(flat > 1000)
})

test('key equality survives a process boundary: a key and its v8 round trip have the same text and hash', (t) => {
  const r = prng(7)
  for (let i = 0; i < 2000; i++) {
    const k = randomValue(r)
    const back = roundTrip(k)
    t.is(textOf(back), textOf(k))
    t.is(hashKey(back), hashKey(k))
  }
})

test('the documented cases: [k, s] tuples, 1 / 1n / "1" / true apart, NaN with NaN, -0 with 0, Dates by time, key order irrelevant', (t) => {
  const same = (a: unknown, b: unknown) => textOf(a) === textOf(b)
  t.true(same(['a', 's'], ['a', 's']))
  t.false(same(['a', 's'], ['b', 's']))
  t.false(same(1, 1n))
  t.false(same(1, '1'))
  t.false(same(1, true))
  t.false(same([1], [1n]))
  t.false(same([1], ['1']))
  t.true(same([NaN], [NaN]))
  t.true(same([-0], [0]))
  t.false(same([null], [undefined]))
  t.true(same(new Date(5), new Date(5)))
  t.false(same(new Date(5), 5))
  t.true(same({ a: 1, b: [2] }, { b: [2], a: 1 }))
  t.true(same(new Map([[1, 'a'], [2, 'b']]), new Map([[2, 'b'], [1, 'a']])))
  t.false(same(new Map([[1, 'a']]), { 1: 'a' }))
  t.true(same(Buffer.from([1, 2]), new Uint8Array([1, 2])))
  t.false(same(new Uint8Array([1, 2]), new Int8Array([1, 2])))
  t.true(same(new Point(1, 2), { x: 1, y: 2 }), 'a class instance is what structured clone makes of it')
  // A user's string never meets an object key's canonical text.
  const table = new KeyTable<number>('key')
  table.set(keyText(['a'], 'key'), 1)
  table.set(['a'], 2)
  t.is(table.size, 2)
})

test('a key holding a function, a symbol or a cycle is ERR_SPILLWAY_UNHASHABLE_KEY naming the key and where, without the function source', (t) => {
  const cyclic: any[] = [1]
  cyclic.push(cyclic)
  const cases: [unknown, RegExp][] = [
    [['a', function secretSauce() { return 'do not print me' }], /holds a function \(secretSauce\) at \[1\]/],
    [{ tag: Symbol('s') }, /holds a symbol \(s\) at \.tag/],
    [Symbol('top'), /holds a symbol \(top\)/],
    [cyclic, /a cycle\) at \[1\]/],
    [new Map([[1, Promise.resolve()]]), /holds a Promise at <Map value 0>/],
  ]
  for (const [k, why] of cases) {
    const e = t.throws(() => hashKey(k, 'groupBy key'), { code: 'ERR_SPILLWAY_UNHASHABLE_KEY' })!
    t.regex(e.message, /^the groupBy key .* cannot be compared by value: it holds/)
    t.regex(e.message, why)
    t.notRegex(e.message, /do not print me/)
    t.throws(() => new KeyTable('groupBy key').entry(k, () => 0), { code: 'ERR_SPILLWAY_UNHASHABLE_KEY' })
  }
  // A function is no primitive key either, even at the top.
  t.throws(() => new KeyTable('join key').get(() => 1), { code: 'ERR_SPILLWAY_UNHASHABLE_KEY', message: /the join key \[Function \(anonymous\)\]/ })
})

test('task keys: specs that differ in a Map, a Set, NaN / null / undefined, -0, a Date, a typed array or a BigInt never share a key', (t) => {
  const specs: unknown[] = [
    [new Map([[1, 'a']])],
    [new Map([[2, 'b']])],
    [new Map([[1, 'b']])],
    [{}],
    [new Set([1])],
    [new Set([2])],
    [NaN],
    [null],
    [undefined],
    [],
    [0],
    [-0],
    [new Date(0)],
    [new Date(1)],
    [new Uint8Array([1])],
    [new Int8Array([1])],
    [new Uint8Array([2])],
    [Buffer.from([1])],
    [1n],
    [2n],
    [1],
    ['1'],
    [{ a: 1, b: 2 }],
    [{ b: 2, a: 1 }],
    [[1, , 3]],
    [[1, undefined, 3]],
  ]
  const keys = specs.map((s) => hashOf({ items: s }))
  t.is(new Set(keys).size, specs.length, 'every spec its own key')
  // The same spec built again (or as a worker receives it) is the same key: a bag built twice runs once.
  t.deepEqual(specs.map((s) => hashOf({ items: roundTrip(s) })), keys)
})

test('task keys over random specs: not deep-strict-equal ⇒ different keys; a v8 round trip ⇒ the same key', (t) => {
  const r = prng(11)
  const seen = new Map<string, unknown>()
  for (let i = 0; i < 3000; i++) {
    const v = randomValue(r)
    const k = hashOf({ items: [v] })
    t.is(hashOf({ items: [roundTrip(v)] }), k)
    if (seen.has(k) && !isDeepStrictEqual(seen.get(k), v)) t.fail(`two different specs share key ${k}`)
    seen.set(k, v)
  }
})

test('a spec holding a function or a symbol is ERR_SPILLWAY_INVALID_ARGUMENT naming its path', (t) => {
  t.throws(() => hashOf({ items: [1, new Map([['f', () => 1]])] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /spec\.items\[1\]<Map value 0>: got "a function"/ })
  t.throws(() => hashOf({ args: [Symbol('s')] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /spec\.args\[0\]: got "a symbol \(s\)"/ })
})

/** Where the missing keys go, and the rank of every other kind, as docs/bags.md documents them. */
const MIXED: unknown[] = [NaN, null, undefined, 3, -1, 2n, 2, '10', '9', 'a', true, false, -0, 0, Infinity, -Infinity, new Date(1), new Date(0), [1, 'a'], [1], [0, 5], { a: 1 }, 1n]

test('sort order: total (antisymmetric, transitive), its ties exactly the equal keys, over random mixed keys in every direction', (t) => {
  const r = prng(3)
  const keys = [...MIXED, ...Array.from({ length: 60 }, () => randomValue(r))]
  for (const options of [{}, { descending: true }, { nullsLast: false }, { descending: true, nullsLast: false }]) {
    const c = keyOrder(options)
    for (const a of keys) for (const b of keys) {
      const ab = Math.sign(c(a, b))
      if (ab !== -Math.sign(c(b, a))) t.fail(`not antisymmetric: ${String(a)} ${String(b)}`)
      if ((ab === 0) !== (textOf(a) === textOf(b))) t.fail(`a tie that is not an equal key, or the reverse: ${textOf(a)} ${textOf(b)}`)
    }
    for (let i = 0; i < 20_000; i++) {
      const [a, b, d] = [0, 0, 0].map(() => keys[Math.floor(r() * keys.length)])
      if (c(a, b) <= 0 && c(b, d) <= 0 && c(a, d) > 0) t.fail(`not transitive: ${textOf(a)} ${textOf(b)} ${textOf(d)}`)
    }
  }
  t.pass()
})

test('sort order as documented: booleans, numbers and bigints by value, strings, Dates, arrays, objects; NaN, null, undefined last (or first)', (t) => {
  // Boxed, as the workers sort: Array.prototype.sort puts undefined last without asking the comparator.
  const sorted = (keys: unknown[], options = {}) => keys.map((k) => [k]).sort((a, b) => keyOrder(options)(a[0], b[0])).map(([k]) => k)
  const asc = sorted(MIXED)
  t.deepEqual(asc.slice(0, 2), [false, true])
  t.deepEqual(asc.slice(2, 11), [-Infinity, -1, -0, 0, 1n, 2, 2n, 3, Infinity])
  t.deepEqual(asc.slice(11, 14), ['10', '9', 'a'])
  t.deepEqual(asc.slice(14, 16), [new Date(0), new Date(1)])
  t.deepEqual(asc.slice(16, 19), [[0, 5], [1], [1, 'a']])
  t.deepEqual(asc.slice(19, 20), [{ a: 1 }])
  t.deepEqual(asc.slice(20), [NaN, null, undefined])
  const desc = sorted(MIXED, { descending: true })
  t.deepEqual(desc.slice(0, 2), [{ a: 1 }, [1, 'a']])
  t.deepEqual(desc.slice(20), [NaN, null, undefined], 'missing keys last whatever the direction')
  t.deepEqual(sorted(MIXED, { nullsLast: false }).slice(0, 3), [NaN, null, undefined])
  t.is(compareKeys(1, 1n), -1, 'of equal value, the number first')
  t.throws(() => compareKeys(1, () => 1), { code: 'ERR_SPILLWAY_UNHASHABLE_KEY' })
})

test('an unserializable value is named by what and where, never by a function source; a Future by its key', (t) => {
  class Future {
    key = 'sub-1'
    onDone = () => 'internal closure text'
  }
  const reason = (v: unknown) => {
    try {
      serialize(v)
    } catch (e) {
      return unserializableReason(v, e)
    }
    return 'serialized'
  }
  t.regex(reason([1, { f: () => 'secret source' }]), /^it holds a function \(f\) at \[1\]\.f; return Buffers/)
  t.notRegex(reason([1, { f: () => 'secret source' }]), /secret source/)
  t.regex(reason(new Future()), /^it is a Future \(key sub-1\); a Future is a handle on a value, not the value: return `await future.result\(\)` instead$/)
  t.regex(reason({ out: [new Future()] }), /^it holds a Future \(key sub-1\) at \.out\[0\]/)
})
