#!/usr/bin/env node
// The floor of bench/bag (b) in Node: the files named in a list read
// through one reused 4 MiB buffer with readSync, each line's end found with
// Buffer#indexOf; no string is made. One of these per core. Prints one JSON line.
'use strict'

const fs = require('node:fs')

const files = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean)
const buf = Buffer.allocUnsafe(4 * 2 ** 20)
let lines = 0
let bytes = 0
const t = process.hrtime.bigint()
for (const f of files) {
  const fd = fs.openSync(f, 'r')
  let n
  let last = 10
  while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) {
    bytes += n
    const view = n === buf.length ? buf : buf.subarray(0, n)
    let p = view.indexOf(10, 0)
    while (p !== -1) {
      lines++
      p = view.indexOf(10, p + 1)
    }
    last = view[n - 1]
  }
  if (last !== 10) lines++
  fs.closeSync(fd)
}
console.log(JSON.stringify({ side: 'floor-node', lines, bytes, seconds: Number(process.hrtime.bigint() - t) / 1e9 }))
