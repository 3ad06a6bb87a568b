#!/usr/bin/env node
// bench/shuffle/hotpath: the worker's shuffle hot path in one process, no
// cluster (a loaded machine's wall times drown a cluster's; this counts CPU
// seconds): a partition of bench/shuffle's records cut by output (hashKey),
// encoded (encodeShard), decoded (decodeShard) and grouped as a groupBy's
// collect does (KeyTable). Compare checkouts with --root.
//
//   node bench/shuffle/hotpath.js [--root DIR] [--file CSV] [--reps 5] [--np 12]
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { values: o } = parseArgs({
  options: {
    root: { type: 'string', default: path.join(__dirname, '..', '..') },
    file: { type: 'string', default: path.join(require('node:os').tmpdir(), 'spillway-bench-shuffle', 'quick', 'left', 'part-000.csv') },
    reps: { type: 'string', default: '5' },
    np: { type: 'string', default: '12' },
    lines: { type: 'boolean' },
  },
})
const dist = (p) => require(path.join(path.resolve(o.root), 'dist', p))
const { hashKey } = dist('wire/bag.js')
const { KeyTable } = dist('wire/key-equality.js')
const { encodeShard, decodeShard } = dist('worker/collections/shuffle/shard-codec.js')
// The collect's grouping as the checkout has it: collectGroups, KeyGroups, or the KeyTable they replaced.
const optional = (p) => {
  try {
    return dist(p)
  } catch {
    return {}
  }
}
const { KeyGroups } = optional('worker/collections/shuffle/key-groups.js')
const { collectGroups } = optional('worker/collections/shuffle/group-collect.js')
const { GroupBound, OutputBound } = dist('worker/collections/shuffle/collect-bound.js')
const groupsOf = collectGroups
  ? async (items, key) => {
      const bound = new GroupBound(new OutputBound({ shuffle: 'bench', output: 0, npartitions: 1, what: 'a groupBy' }, 2 ** 40), undefined)
      return collectGroups((async function* () { for (let i = 0; i < items.length; i += 2048) yield { items: items.slice(i, i + 2048) } })(), async () => key, bound)
    }
  : KeyGroups
  ? (items, key) => {
      const g = new KeyGroups('groupBy key')
      for (const it of items) {
        const k = key(it)
        ;(g.find(k) ?? g.add(k, []))[1].push(it)
      }
      return g.pairs
    }
  : (items, key) => {
      const g = new KeyTable('groupBy key')
      for (const it of items) {
        const k = key(it)
        ;(g.find(k) ?? g.add(k, [])).value.push(it)
      }
      return [...g]
    }

const parse = (line) => {
  const a = line.indexOf(',')
  const b = line.indexOf(',', a + 1)
  return { key: line.slice(0, a), value: Number(line.slice(a + 1, b)), payload: line.slice(b + 1) }
}
const text = fs.readFileSync(o.file, 'latin1').split('\n').filter((l) => l && !l.startsWith('key,'))
const NP = Number(o.np)
const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}
const phases = { split: 0, encode: 0, decode: 0, group: 0 }
let bytes = 0
async function main() {
for (let r = 0; r < Number(o.reps); r++) {
  const items = o.lines ? text.slice() : text.map(parse)
  const key = o.lines ? (l) => l.slice(0, l.indexOf(',')) : (x) => x.key
  let t = cpu()
  const out = Array.from({ length: NP }, () => [])
  for (const it of items) out[hashKey(key(it), 'key') % NP].push(it)
  let t2 = cpu()
  phases.split += t2 - t
  const blobs = out.map((x) => encodeShard(x))
  t = cpu()
  phases.encode += t - t2
  bytes = blobs.reduce((a, b) => a + b.length, 0)
  const back = blobs.map((b) => decodeShard(b))
  t2 = cpu()
  phases.decode += t2 - t
  let groups = 0
  for (const shard of back) groups += (await groupsOf(shard, key)).length
  phases.group += cpu() - t2
  if (r === 0) console.error(`${items.length} items, ${groups} groups, ${(bytes / 2 ** 20).toFixed(1)} MiB encoded`)
}
}
main().then(() => {
const reps = Number(o.reps)
console.log(JSON.stringify(Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, +(v / reps).toFixed(3)]))))
})
