import test from 'ava'
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { availableCodecs, shuffledCodecs } from 'spillway'
import { scratch } from './helpers'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')

function spillway(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 120_000, maxBuffer: 16 * 2 ** 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/** The codec/level pairs the bench measures, among those compiled in. */
function expectedConfigs(): string[] {
  const all = ['lz4:-', 'snappy:-', 'zstd:1', 'zstd:3', 'zstd:9', 'zstd:19', 'zlib:1', 'zlib:6', 'zlib:9', 'none:-', 'lz4+shuffle:-', 'zstd+shuffle:1', 'zstd+shuffle:3', 'zstd+shuffle:9']
  const have = new Set([...availableCodecs(), ...shuffledCodecs()])
  return all.filter((c) => have.has(c.split(':')[0]))
}

const key = (r: any) => `${r.codec}:${r.level ?? '-'}`

function checkResult(t: any, r: any, repeat: number) {
  t.true(r.roundtrip, `${key(r)} roundtrip`)
  t.true(r.inputBytes > 0)
  t.true(r.compressedBytes > 0)
  t.true(Math.abs(r.ratio - r.inputBytes / r.compressedBytes) < 1e-9)
  t.true(r.runs >= 1 && r.runs <= repeat)
  for (const m of [r.compressMBps, r.decompressMBps]) {
    t.is(m.samples.length, r.runs)
    t.true(m.min > 0 && m.min <= m.median && m.median <= m.max, `${key(r)}: ${m.min} ≤ ${m.median} ≤ ${m.max}`)
  }
}

test('spillway bench codecs --repeat 2 --json on synthetic data: every codec and level, both datasets, median and spread', async (t) => {
  const { code, stdout, stderr } = await spillway(['bench', 'codecs', '--repeat', '2', '--chunk-mb', '1', '--json'])
  t.is(code, 0, stderr)
  const b = JSON.parse(stdout)
  t.is(b.source.kind, 'synthetic')
  t.is(b.source.chunkBytes, 2 ** 20)
  t.is(b.repeat, 2)
  t.deepEqual(b.codecsAvailable, [...availableCodecs(), ...shuffledCodecs()])
  const datasets = [...new Set(b.results.map((r: any) => r.data))]
  t.deepEqual(datasets, ['float64 random', 'int64 randint(0,10)'])
  for (const ds of datasets) {
    const rs = b.results.filter((r: any) => r.data === ds)
    t.deepEqual(rs.map(key), expectedConfigs())
    for (const r of rs) checkResult(t, r, 2)
  }
  const ratio = (ds: string, k: string) => b.results.find((r: any) => r.data === ds && key(r) === k)?.ratio
  // Random floats barely compress; small integers do, and zstd beats lz4 on them.
  if (availableCodecs().includes('lz4')) t.true(ratio('float64 random', 'lz4:-') < 1.1)
  if (availableCodecs().includes('zstd') && availableCodecs().includes('lz4')) t.true(ratio('int64 randint(0,10)', 'zstd:3') > ratio('int64 randint(0,10)', 'lz4:-'))
  t.true(Math.abs(ratio('int64 randint(0,10)', 'none:-') - 1) < 0.001, 'none stores the data (plus a frame header)')
})

test('spillway bench codecs --file reads the file in chunks and prints a table', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'data.csv')
  const rows: string[] = []
  for (let i = 0, len = 0; len < 2.5 * 2 ** 20; i++) {
    const row = `${i},${((i * 0.37) % 17).toFixed(2)},station-${i % 13},${i % 7 === 0 ? 'NA' : (i % 101) / 10}\n`
    rows.push(row)
    len += row.length
  }
  writeFileSync(file, rows.join(''))
  const size = Buffer.byteLength(rows.join(''))

  const json = await spillway(['bench', 'codecs', '--file', file, '--chunk-mb', '1', '--repeat', '2', '--codecs', availableCodecs().slice(0, 2).join(','), '--json'])
  t.is(json.code, 0, json.stderr)
  const b = JSON.parse(json.stdout)
  t.is(b.source.kind, 'file')
  t.is(b.source.fileBytes, size)
  t.is(b.source.usedBytes, size, 'a small file is used whole')
  t.is(b.source.chunks, 3, '2.5 MiB in 1 MiB chunks')
  t.deepEqual([...new Set(b.results.map((r: any) => r.codec))], availableCodecs().slice(0, 2))
  for (const r of b.results) {
    t.is(r.data, 'data.csv')
    t.is(r.inputBytes, size)
    checkResult(t, r, 2)
  }

  const text = await spillway(['bench', 'codecs', '--file', file, '--chunk-mb', '1', '--repeat', '2', '--codecs', availableCodecs()[0]])
  t.is(text.code, 0, text.stderr)
  t.true(text.stdout.includes('CODEC BENCHMARK'))
  t.true(text.stdout.includes(`Data: ${file}: 3 chunk(s)`))
  t.regex(text.stdout, /codec +level +ratio +compress MB\/s +decompress MB\/s +runs/)
  t.regex(text.stdout, new RegExp(`\\n${availableCodecs()[0]} +(-|\\d+) +\\d+\\.\\d\\d +[\\d.]+ \\([\\d.]+–[\\d.]+\\) +[\\d.]+ \\([\\d.]+–[\\d.]+\\) +2\\n`))
})

test('spillway bench codecs --dtype float64 reads a file as float64 values, which the shuffle codecs regroup', async (t) => {
  const file = join(scratch(t), 'field.f64')
  const field = new Float64Array(300_001)
  for (let i = 0; i < field.length; i++) field[i] = 280 + 15 * Math.sin(i * 1e-3) + 3 * Math.cos(i * 7.3e-3) + ((i * 2654435761) % 1000) * 1e-9
  writeFileSync(file, Buffer.from(field.buffer))
  const r = await spillway(['bench', 'codecs', '--file', file, '--dtype', 'float64', '--chunk-mb', '1', '--repeat', '2', '--codecs', 'lz4,lz4+shuffle,zstd+shuffle', '--json'])
  t.is(r.code, 0, r.stderr)
  const b = JSON.parse(r.stdout)
  t.is(b.source.dtype, 'float64')
  t.is(b.source.chunks, 3)
  const by = (k: string) => b.results.find((x: any) => key(x) === k)
  for (const x of b.results) {
    t.is(x.data, 'field.f64 (float64)')
    t.is(x.inputBytes, field.byteLength)
    checkResult(t, x, 2)
  }
  t.deepEqual(b.results.map(key), ['lz4:-', 'lz4+shuffle:-', 'zstd+shuffle:1', 'zstd+shuffle:3', 'zstd+shuffle:9'])
  t.true(by('lz4+shuffle:-').ratio > 1.2 * by('lz4:-').ratio, `lz4+shuffle ${by('lz4+shuffle:-').ratio} vs lz4 ${by('lz4:-').ratio}`)
  const text = await spillway(['bench', 'codecs', '--file', file, '--dtype', 'float64', '--repeat', '1', '--codecs', 'lz4+shuffle'])
  t.is(text.code, 0, text.stderr)
  t.true(text.stdout.includes(`Data: ${file} as float64: 1 chunk(s)`), text.stdout)
  t.regex(text.stdout, /\nlz4\+shuffle +- +\d+\.\d\d /)

  const bad = await spillway(['bench', 'codecs', '--file', file, '--dtype', 'complex128'])
  t.is(bad.code, 2)
  t.regex(bad.stderr, /--dtype: "complex128" is not one of float32, float64, int32, int64/)
  const alone = await spillway(['bench', 'codecs', '--dtype', 'float64'])
  t.is(alone.code, 2)
  t.regex(alone.stderr, /--dtype describes the values of --file/)
})

test('spillway bench rejects unknown benchmarks, codecs and files with exit code 2', async (t) => {
  const sub = await spillway(['bench', 'disks'])
  t.is(sub.code, 2)
  t.regex(sub.stderr, /unknown benchmark "disks"; available: codecs/)
  const codec = await spillway(['bench', 'codecs', '--codecs', 'brotli'])
  t.is(codec.code, 2)
  t.regex(codec.stderr, /--codecs: unknown or unavailable 'brotli'; available here: /)
  const file = await spillway(['bench', 'codecs', '--file', '/nonexistent/spillway-data'])
  t.is(file.code, 2)
  t.regex(file.stderr, /--file \/nonexistent\/spillway-data: ENOENT/)
})
