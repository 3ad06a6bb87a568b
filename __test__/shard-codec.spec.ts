// The binary shard layout (collections/shuffle/shard-codec.ts and the
// core's shard module) against v8.serialize on the same items: every item
// comes back as v8 would give it back, whatever the mix of shapes.
import test from 'ava'
import { isDeepStrictEqual } from 'node:util'
import { deserialize, serialize } from 'node:v8'
import { decodeShard, encodeShard, isBinaryShard } from '../src/worker/collections/shuffle/shard-codec'

function rng(seed: number) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
}

const SCALARS = [0, -0, NaN, Infinity, -Infinity, 1.5, 2 ** 53, -(2 ** 31), '', 'a', 'é', '名前', '😀', '\ud800', 'x'.repeat(70_000), true, false, null, 0n, -(2n ** 100n), 12345678901234567890n]

function value(r: () => number, depth = 0): unknown {
  const x = r()
  const scalar = () => (r() < 0.5 ? SCALARS[Math.floor(r() * SCALARS.length)] : r() < 0.5 ? Math.floor(r() * 1000) : `k${Math.floor(r() * 50)}`)
  if (x < 0.3 || depth > 2) return scalar()
  if (x < 0.5) return [scalar(), scalar()]
  if (x < 0.75) return { k: scalar(), v: scalar(), ...(r() < 0.3 ? { s: scalar() } : {}) }
  if (x < 0.8) return { '2': scalar(), b: scalar(), '1': scalar(), __proto__x: scalar() }
  if (x < 0.85) return new Map([[scalar(), value(r, depth + 1)]])
  if (x < 0.88) return new Date(Math.floor(r() * 1e12))
  if (x < 0.91) return [scalar(), [scalar(), value(r, depth + 1)]]
  if (x < 0.93) return { k: undefined, v: 1 }
  if (x < 0.95) return undefined
  if (x < 0.97) return [scalar()]
  return { nested: { k: scalar() } }
}

test('any mix of shapes comes back exactly as v8.serialize gives it back (2000 seeded shards)', (t) => {
  const r = rng(7)
  let binary = 0
  for (let i = 0; i < 2000; i++) {
    const items = Array.from({ length: Math.floor(r() * 30) }, () => value(r))
    const data = encodeShard(items)
    if (isBinaryShard(data)) binary++
    const back = decodeShard(data)
    const v8 = deserialize(serialize(items))
    if (!isDeepStrictEqual(back, v8)) return t.fail(`shard ${i}: ${JSON.stringify(items, (_, x) => (typeof x === 'bigint' ? `${x}n` : x))}`)
    // Key order too, which isDeepStrictEqual does not look at.
    for (const [j, v] of back.entries()) if (v && typeof v === 'object' && !Array.isArray(v)) t.deepEqual(Object.keys(v), Object.keys(v8[j] as object))
  }
  t.true(binary > 1000, `${binary} of 2000 shards in the binary layout`)
})

test('a record whose key is __proto__ stays an own key, the prototype untouched', (t) => {
  const items = [JSON.parse('{"__proto__": 1, "k": "a"}'), { k: 'b' }]
  const back = decodeShard(encodeShard(items)) as Record<string, unknown>[]
  t.is(Object.getPrototypeOf(back[0]), Object.prototype)
  t.deepEqual(Object.keys(back[0]), ['__proto__', 'k'])
  t.is(Object.getOwnPropertyDescriptor(back[0], '__proto__')?.value, 1)
})

test('bare strings and numbers stay v8.serialize (faster for them); pairs and records go binary', (t) => {
  t.false(isBinaryShard(encodeShard(['a', 'b', 1, 2n])))
  t.true(isBinaryShard(encodeShard([['a', 1]])))
  t.true(isBinaryShard(encodeShard([{ k: 1 }])))
  t.false(isBinaryShard(encodeShard([new Map(), new Date(0)])))
})

test('a damaged binary shard is ERR_SPILLWAY_CORRUPT_VALUE, never a wrong value', (t) => {
  const good = encodeShard(Array.from({ length: 50 }, (_, i) => ({ k: `key${i}`, v: i, big: BigInt(i) })))
  const r = rng(3)
  let refused = 0
  for (let i = 0; i < 500; i++) {
    const bad = Buffer.from(good)
    bad[4 + Math.floor(r() * (bad.length - 4))] ^= 1 + Math.floor(r() * 255)
    try {
      decodeShard(bad)
    } catch (e: any) {
      t.is(e.code, 'ERR_SPILLWAY_CORRUPT_VALUE', e.message)
      refused++
    }
  }
  // Flipped characters or numbers still decode (no checksum here: the spill frame and the socket carry those).
  t.true(refused > 50, `${refused} of 500 refused`)
  const e = t.throws(() => decodeShard(good.subarray(0, good.length - 3)))
  t.is((e as any).code, 'ERR_SPILLWAY_CORRUPT_VALUE')
  t.regex(e!.message, /corrupt shuffle shard: sections add up to \d+ bytes, the shard has \d+/)
})
