#!/usr/bin/env node
// bench/frame/smallfiles.js's plain-Node side: one process reads every file
// with hyparquet, one after another, and counts and sums by cat the rows with
// x > 500 in a Map. Prints one JSON line.
'use strict'

const fs = require('node:fs')
const path = require('node:path')

async function main() {
  const dir = process.argv[process.argv.indexOf('--dir') + 1]
  const { parquetRead } = await import('hyparquet')
  const t0 = performance.now()
  const groups = new Map()
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort()) {
    const b = fs.readFileSync(path.join(dir, name))
    const file = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)
    await parquetRead({
      file,
      columns: ['cat', 'x', 'y'],
      onComplete: (rows) => {
        for (const [cat, x, y] of rows) {
          if (!(x > 500)) continue
          const g = groups.get(cat) ?? groups.set(cat, { n: 0, s: 0 }).get(cat)
          g.n++
          g.s += Number(y)
        }
      },
    })
  }
  const seconds = (performance.now() - t0) / 1000
  let rows = 0
  for (const g of groups.values()) rows += g.n
  console.log(JSON.stringify({ seconds, groups: groups.size, rows }))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
