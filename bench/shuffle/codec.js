#!/usr/bin/env node
// bench/shuffle/codec: the binary shard layout (worker/collections/shuffle/
// shard-codec.ts, checked and written by the core) against v8.serialize /
// deserialize on the same items, per item shape, napi crossings counted.
// Sides alternate within each repetition; min / median / max of the ratio
// (time of the binary layout / time of v8) over the repetitions; < 1 means
// the binary layout is faster.
//
//   node bench/shuffle/codec.js [--reps 7] [--items 200000] [--only records]   (after npm run build:ts)
'use strict'

const { parseArgs } = require('node:util')
const v8 = require('node:v8')
const { encodeShard, decodeShard } = require('../../dist/worker/collections/shuffle/shard-codec')

const { values: o } = parseArgs({ options: { reps: { type: 'string', default: '7' }, items: { type: 'string', default: '200000' }, only: { type: 'string' }, json: { type: 'boolean' } } })
const REPS = Number(o.reps)
const N = Number(o.items)

let seed = 42
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
const word = () => Math.floor(rand() * 1e9).toString(36)
const SHAPES = {
  strings: () => word() + word(),
  numbers: () => rand() * 1e6,
  ints: () => Math.floor(rand() * 1e6),
  bigints: () => BigInt(Math.floor(rand() * 1e12)) * 1000003n,
  'pairs [string, number]': () => [word(), Math.floor(rand() * 1000)],
  // bench/shuffle's record: a key, a value and a payload string (gen.js).
  'records {k, v, s}': () => ({ k: Math.floor(rand() * 1e6), v: rand(), s: word() + word() + word() }),
  'records, 8 fields': () => ({ id: Math.floor(rand() * 1e9), name: word(), city: word(), score: rand(), ok: rand() < 0.5, n: Math.floor(rand() * 100), tag: word(), x: null }),
  'unicode records': () => ({ k: word(), s: 'héllo wörld ' + word() + ' 名前😀' }),
  'mixed (10% v8: Map, Date, nested)': () => {
    const r = rand()
    if (r < 0.03) return new Map([[word(), 1]])
    if (r < 0.06) return new Date(Math.floor(rand() * 1e12))
    if (r < 0.1) return [word(), [1, 2]]
    return { k: Math.floor(rand() * 1e6), s: word() }
  },
}

const time = (f) => {
  const t = process.hrtime.bigint()
  f()
  return Number(process.hrtime.bigint() - t) / 1e9
}
const spread = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return { min: s[0], median: s[s.length >> 1], max: s[s.length - 1] }
}
const rows = []
// Shards as the shuffle makes them: many arrays of ~10 000 items.
const PER = 10_000
for (const [name, make] of Object.entries(SHAPES)) {
  if (o.only && !name.includes(o.only)) continue
  const shards = Array.from({ length: Math.ceil(N / PER) }, () => Array.from({ length: PER }, make))
  const ours = shards.map(encodeShard)
  const theirs = shards.map((s) => v8.serialize(s))
  const enc = []
  const dec = []
  const ns = { ours: [], v8: [] }
  for (let r = 0; r < REPS + 1; r++) {
    const sides = r % 2 ? ['v8', 'ours'] : ['ours', 'v8']
    const t = {}
    for (const side of sides) {
      t[side] = side === 'ours' ? { e: time(() => shards.forEach(encodeShard)), d: time(() => ours.forEach(decodeShard)) } : { e: time(() => shards.forEach((s) => v8.serialize(s))), d: time(() => theirs.forEach((b) => v8.deserialize(b))) }
    }
    if (r === 0) continue // warm-up
    for (const side of ['ours', 'v8']) ns[side].push(((t[side].e + t[side].d) / N) * 1e9)
    enc.push(t.ours.e / t.v8.e)
    dec.push(t.ours.d / t.v8.d)
  }
  const bytes = ours.reduce((a, b) => a + b.length, 0) / theirs.reduce((a, b) => a + b.length, 0)
  rows.push({ shape: name, encode: spread(enc), decode: spread(dec), bytes, nsPerItem: { ours: spread(ns.ours).median, v8: spread(ns.v8).median } })
}
if (o.json) console.log(JSON.stringify(rows))
else {
  console.log(`binary shard / v8, time ratio (min median max over ${REPS} reps), ${N} items a shape in shards of ${PER}; < 1: binary faster`)
  const f = (s) => `${s.median.toFixed(2)} (${s.min.toFixed(2)}–${s.max.toFixed(2)})`
  for (const r of rows) console.log(`${r.shape.padEnd(36)} encode ${f(r.encode).padEnd(20)} decode ${f(r.decode).padEnd(20)} bytes ${r.bytes.toFixed(2)}  encode+decode ns/item: binary ${r.nsPerItem.ours.toFixed(0)}, v8 ${r.nsPerItem.v8.toFixed(0)}`)
}
