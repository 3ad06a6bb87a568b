#!/usr/bin/env node
// bench/shuffle's machine rates, in a fresh process (run one per worker at
// once; the machine's rate is their sum, as bench/limit does): writing new
// shard-sized files through the page cache and reading them back, and
// hashing keys (FNV-1a, the shuffle's own hash, over the key bytes in a
// tight loop). Prints one JSON line of bytes per second.
//
//   node bench/shuffle/rates.js --dir DIR --write-mb 150 --keys FILE
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { values: o } = parseArgs({ options: { dir: { type: 'string', default: os.tmpdir() }, 'write-mb': { type: 'string', default: '150' }, sample: { type: 'string' } } })
const FILE = 8 << 20 // a shard part's size (worker/collections/shuffle/service.ts SHARD_PART)
const now = () => performance.now() / 1000

function pageCache() {
  const n = Math.max(4, Math.round((Number(o['write-mb']) * 1e6) / FILE))
  const chunk = Buffer.alloc(FILE)
  for (let i = 0; i < FILE; i += 4096) chunk[i] = i & 255
  const dir = fs.mkdtempSync(path.join(o.dir, 'spillway-shuffle-rates-'))
  try {
    const files = Array.from({ length: n }, (_, i) => path.join(dir, `f${i}`))
    let t = now()
    for (const f of files) {
      const fd = fs.openSync(f, 'w', 0o600)
      fs.writeSync(fd, chunk)
      fs.closeSync(fd)
    }
    const write = (n * FILE) / (now() - t)
    const into = Buffer.alloc(FILE)
    t = now()
    for (const f of files) {
      const fd = fs.openSync(f, 'r')
      if (fs.readSync(fd, into, 0, FILE, 0) !== FILE) throw new Error(`short read of ${f}`)
      fs.closeSync(fd)
    }
    const read = (n * FILE) / (now() - t)
    return { write, read }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** FNV-1a over each key's bytes (keys taken from a sample of the data), best of 5. */
function hashing() {
  const text = o.sample ? fs.readFileSync(o.sample, 'latin1').slice(0, 32e6) : 'k123456,1,x\n'.repeat(1e6)
  const keys = []
  let at = text.indexOf('\n') + 1
  while (at < text.length) {
    const comma = text.indexOf(',', at)
    const nl = text.indexOf('\n', at)
    if (comma < 0 || nl < 0) break
    keys.push(Buffer.from(text.slice(at, comma), 'latin1'))
    at = nl + 1
  }
  const bytes = keys.reduce((a, k) => a + k.length, 0)
  let best = Infinity
  let sink = 0
  for (let r = 0; r < 5; r++) {
    const t = now()
    for (const k of keys) {
      let h = 0x811c9dc5
      for (let i = 0; i < k.length; i++) h = Math.imul(h ^ k[i], 0x01000193)
      sink ^= h
    }
    best = Math.min(best, now() - t)
  }
  return { hash: bytes / best, keyBytesPerKey: bytes / keys.length, sink }
}

const pc = pageCache()
const h = hashing()
console.log(JSON.stringify({ write: pc.write, read: pc.read, hash: h.hash, keyBytesPerKey: h.keyBytesPerKey, dir: o.dir }))
