// bench/shuffle's data, generated once into a cache folder under the OS temp
// dir (kept between runs; a manifest.json written last marks a complete set):
//
//   left/part-NNN.csv   key,value,payload   (records: keys drawn uniformly from 1.25 K values)
//   right/part-NNN.csv  key,attr,payload    (one row for each of the K keys: 80 % of left rows match)
//   text/part-NNN.txt   lines of words drawn from a Zipf (s = 1) vocabulary of V words
//
// The manifest holds the exact answers, counted while generating: rows,
// distinct keys, join rows, words and distinct words, the top words' counts.
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const CACHE = path.join(os.tmpdir(), 'spillway-bench-shuffle')

/** xorshift32: fast, seeded, good enough to draw keys and words. */
function rng(seed) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 4294967296
  }
}

const LETTERS = 'etaoinshrdlcumwfgypbvkjxqz'
/** The word of rank r: bijective base 26 (a … z, aa …), so frequent words are short and every rank its own word. */
function wordOf(r) {
  let s = ''
  let n = r + 1
  while (n > 0) {
    n -= 1
    s = LETTERS[n % 26] + s
    n = Math.floor(n / 26)
  }
  return s
}

function writeFiles(dir, nfiles, bytesPerFile, header, fill) {
  fs.mkdirSync(dir, { recursive: true })
  const files = []
  for (let f = 0; f < nfiles; f++) {
    const file = path.join(dir, `part-${String(f).padStart(3, '0')}.${header === undefined ? 'txt' : 'csv'}`)
    const fd = fs.openSync(file, 'w')
    let written = 0
    if (header !== undefined) written += fs.writeSync(fd, header + '\n')
    while (written < bytesPerFile) {
      const chunk = fill(Math.min(4 << 20, bytesPerFile - written))
      if (!chunk) break
      written += fs.writeSync(fd, chunk)
    }
    fs.closeSync(fd)
    files.push(file)
  }
  return files
}

/**
 * @param o { tag, leftBytes, files, keys, payload, textBytes, textFiles, vocab }
 * @returns the manifest (with `dir`)
 */
function ensureData(o, log = console.error) {
  const dir = path.join(CACHE, o.tag)
  const manifestFile = path.join(dir, 'manifest.json')
  if (fs.existsSync(manifestFile)) {
    const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8'))
    if (JSON.stringify(m.spec) === JSON.stringify(o)) return { ...m, dir }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  const t0 = Date.now()
  log(`generating bench/shuffle data (${o.tag}) into ${dir} …`)
  const rand = rng(12345)
  // A pool of payload text: each row takes a slice at a random offset.
  const pool = Array.from({ length: 1 << 16 }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('')
  const payload = () => {
    const at = Math.floor(rand() * (pool.length - o.payload))
    return pool.slice(at, at + o.payload)
  }
  // left
  const K = o.keys
  const leftKeys = Math.round(K * 1.25)
  const seen = new Uint8Array(leftKeys)
  let rows = 0
  let joinRows = 0
  const leftPer = Math.ceil(o.leftBytes / o.files)
  writeFiles(path.join(dir, 'left'), o.files, leftPer, 'key,value,payload', (bytes) => {
    const lines = []
    let n = 0
    while (n < bytes) {
      const k = Math.floor(rand() * leftKeys)
      seen[k] = 1
      rows++
      if (k < K) joinRows++
      const line = `k${k},${Math.floor(rand() * 1e6)},${payload()}\n`
      n += line.length
      lines.push(line)
    }
    return lines.join('')
  })
  let groups = 0
  for (const s of seen) groups += s
  // right: every key 0..K-1 once, over a quarter as many files.
  const rightFiles = Math.max(2, Math.round(o.files / 4))
  const perRight = Math.ceil(K / rightFiles)
  let nextKey = 0
  let rightBytes = 0
  for (let f = 0; f < rightFiles; f++) {
    const end = Math.min(K, nextKey + perRight)
    writeFiles(path.join(dir, 'right'), 1, Infinity, 'key,attr,payload', () => {
      if (nextKey >= end) return undefined
      const lines = []
      for (let i = 0; i < 20000 && nextKey < end; i++, nextKey++) lines.push(`k${nextKey},${nextKey % 1000},${payload().slice(0, 40)}\n`)
      const s = lines.join('')
      rightBytes += s.length
      return s
    })
    fs.renameSync(path.join(dir, 'right', 'part-000.csv'), path.join(dir, 'right', `r-${String(f).padStart(3, '0')}.csv`))
  }
  // text: Zipf over V words, rank = floor(V^u) - 1 (density ∝ 1 / rank).
  const V = o.vocab
  const vocab = Array.from({ length: V }, (_, r) => wordOf(r))
  const counts = new Uint32Array(V)
  const lnV = Math.log(V + 1)
  let words = 0
  writeFiles(path.join(dir, 'text'), o.textFiles, Math.ceil(o.textBytes / o.textFiles), undefined, (bytes) => {
    const lines = []
    let n = 0
    while (n < bytes) {
      const ws = []
      const len = 6 + Math.floor(rand() * 14)
      for (let i = 0; i < len; i++) {
        const r = Math.min(V - 1, Math.floor(Math.exp(rand() * lnV)) - 1)
        counts[r]++
        ws.push(vocab[r])
      }
      words += len
      const line = ws.join(' ') + '\n'
      n += line.length
      lines.push(line)
    }
    return lines.join('')
  })
  let distinct = 0
  for (const c of counts) if (c) distinct++
  const top = Array.from({ length: 5 }, (_, r) => [vocab[r], counts[r]])
  const size = (sub) => fs.readdirSync(path.join(dir, sub)).reduce((a, f) => a + fs.statSync(path.join(dir, sub, f)).size, 0)
  const manifest = {
    spec: o,
    rows,
    groups,
    keys: K,
    joinRows,
    leftBytes: size('left'),
    rightBytes: size('right'),
    textBytes: size('text'),
    words,
    distinctWords: distinct,
    top,
    generatedSeconds: (Date.now() - t0) / 1000,
  }
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2))
  log(`  done in ${manifest.generatedSeconds.toFixed(0)} s: ${rows} rows (${(manifest.leftBytes / 1e9).toFixed(2)} GB), ${K} right rows, ${words} words (${(manifest.textBytes / 1e9).toFixed(2)} GB, ${distinct} distinct)`)
  return { ...manifest, dir }
}

module.exports = { ensureData, CACHE, wordOf }

if (require.main === module) {
  const spec = JSON.parse(process.argv[2])
  console.log(JSON.stringify(ensureData(spec)))
}
