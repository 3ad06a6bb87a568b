#!/usr/bin/env node
// bench/limit's measurements, in a fresh process: the rates the recipe's
// pressure test is made of, on this machine, now. Prints one JSON line of
// bytes per second (one core each) and the cores available.
//
//   node --expose-gc bench/limit/rates.js [--dir DIR] [--touch-mb 1600] [--write-mb 1600] [--case random|randint]
//
// Memory is touched and files written at the scale of the test itself: on a
// virtual machine that hands freed pages back to the host (virtio-balloon
// free page reporting), a small sample lands on pages still backed and
// reads fast, where the test's gigabytes mostly do not.
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const spillway = require('../..')
const { spreadOf } = require('../core/timing')

const { values: opts } = parseArgs({ options: { dir: { type: 'string', default: os.tmpdir() }, 'touch-mb': { type: 'string', default: '1600' }, 'write-mb': { type: 'string', default: '1600' }, case: { type: 'string', default: 'random' } } })
// The test's own generator and sum: randint(0, 10) int64 for --case randint.
const SPEC = opts.case === 'randint' ? { kind: 'randint', low: 0, high: 10 } : { kind: 'random' }
const DTYPE = opts.case === 'randint' ? 'int64' : 'float64'
const CHUNK = 32_000_000 // the recipe's chunk: 2000 × 2000 float64
const FILES = Math.max(4, Math.round((Number(opts['write-mb']) * 1e6) / CHUNK))
const TOUCH = Math.max(256, Number(opts['touch-mb'])) * 1e6
const gc = globalThis.gc ?? (() => {})
const now = () => performance.now() / 1000

const median = (xs) => spreadOf(xs).median

/** The generation kernel on one core, into memory already faulted in (as a
 *  worker's chunks reuse the buffers of the chunks it spilled). */
async function generation() {
  const times = []
  for (let i = 0; i < 12; i++) {
    gc() // returns the last chunk's buffer to the pool
    await new Promise((r) => setImmediate(r))
    const t = now()
    await spillway.generateChunk({ ...SPEC, seed: 1, chunkId: i, len: CHUNK / 8 })
    times.push(now() - t)
  }
  return CHUNK / median(times.slice(2))
}

/** First touch of memory the process has not used before: what a worker pays
 *  once for the part of its limit that it keeps resident. */
function firstTouch() {
  const piece = 200e6
  const pieces = []
  const t = now()
  for (let done = 0; done < TOUCH; done += piece) {
    const a = new Uint8Array(new ArrayBuffer(piece))
    for (let i = 0; i < piece; i += 4096) a[i] = 1
    pieces.push(a)
  }
  const s = now() - t
  return (pieces.length * piece) / s
}

/** Writing spill-sized files through the page cache (new files, so the
 *  kernel allocates their pages, as for spilled chunks) and reading them back. */
function pageCache(chunk) {
  const dir = fs.mkdtempSync(path.join(opts.dir, 'spillway-limit-'))
  try {
    const files = Array.from({ length: FILES }, (_, i) => path.join(dir, `f${i}`))
    let t = now()
    for (const f of files) {
      const fd = fs.openSync(f, 'w', 0o600)
      fs.writeSync(fd, chunk)
      fs.closeSync(fd)
    }
    const write = (FILES * CHUNK) / (now() - t)
    const into = Buffer.alloc(CHUNK)
    t = now()
    for (const f of files) {
      const fd = fs.openSync(f, 'r')
      if (fs.readSync(fd, into, 0, CHUNK, 0) !== CHUNK) throw new Error(`short read of ${f}`)
      fs.closeSync(fd)
    }
    const read = (FILES * CHUNK) / (now() - t)
    return { write, read }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function sum(chunk) {
  const times = []
  for (let i = 0; i < 15; i++) {
    const t = now()
    await spillway.reduceChunk(chunk, DTYPE, 'sum')
    times.push(now() - t)
  }
  return CHUNK / median(times.slice(2))
}

async function main() {
  const chunk = Buffer.from(await spillway.generateChunk({ ...SPEC, seed: 7, chunkId: 0, len: CHUNK / 8 }))
  const touch = firstTouch()
  const gen = await generation()
  const { write, read } = pageCache(chunk)
  const s = await sum(chunk)
  console.log(JSON.stringify({ generate: gen, firstTouch: touch, write, read, sum: s, cores: os.availableParallelism(), dir: opts.dir, fileBytes: FILES * CHUNK }))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
