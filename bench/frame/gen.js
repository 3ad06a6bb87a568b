// bench/frame's data: CSV files of (cat utf8, k int64, x float64, y int64),
// nulls in x and y, generated once per size into
// $TMPDIR/spillway-bench-frame/<tag>/ and reused (a .done marker says the
// files are whole).
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const CATS = Array.from({ length: 20 }, (_, i) => `cat-${String.fromCharCode(97 + i)}${i % 3 === 0 ? ' "q"' : ''}`)

function ensureData({ tag, bytes, files, keys }) {
  const dir = path.join(os.tmpdir(), 'spillway-bench-frame', tag)
  const done = path.join(dir, '.done')
  if (fs.existsSync(done)) return { dir, ...JSON.parse(fs.readFileSync(done, 'utf8')) }
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  // mulberry32: a small seeded generator whose low bits are as good as its high ones.
  let x = 42
  const next = (m) => {
    x = (x + 0x6d2b79f5) | 0
    let t = Math.imul(x ^ (x >>> 15), 1 | x)
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t)
    return ((t ^ (t >>> 14)) >>> 0) % m
  }
  let rows = 0
  for (let f = 0; f < files; f++) {
    const fd = fs.openSync(path.join(dir, `part-${String(f).padStart(3, '0')}.csv`), 'w')
    fs.writeSync(fd, 'cat,k,x,y\n')
    let written = 0
    while (written < bytes / files) {
      let chunk = ''
      for (let i = 0; i < 10000; i++) {
        const c = CATS[next(CATS.length)]
        const xv = next(10) === 0 ? '' : (next(200000) / 100 - 1000).toFixed(2)
        const yv = next(12) === 0 ? '' : String(next(1000))
        chunk += `"${c.replace(/"/g, '""')}",${next(keys)},${xv},${yv}\n`
      }
      written += Buffer.byteLength(chunk)
      rows += 10000
      fs.writeSync(fd, chunk)
    }
    fs.closeSync(fd)
  }
  const meta = { rows, files, keys }
  fs.writeFileSync(done, JSON.stringify(meta))
  return { dir, ...meta }
}

module.exports = { ensureData }
