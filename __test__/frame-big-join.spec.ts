// A join larger than memory: two CSV files of about 3× the workers' total
// memory, joined left on 2 small workers (its matched rows: the inner join), each answer checked
// exactly against counts and sums made in plain JS while the files were
// written, every worker's peak RSS under its limit and no worker lost.
import test from 'ava'
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, col, count, frame, LocalCluster, schedulerWorkers, sum, when } from 'spillway'
import { peakRss } from './cluster-helpers'

const MIB = 2 ** 20
/**
 * The smallest worker that holds: an idle one's RSS is about 66 MiB, and a
 * frame task on a 4 MiB block takes about 75 MiB more at its peak, past the
 * pause threshold (85%) of a 128 MiB worker.
 */
const WORKER_MEMORY = 192 * MIB
const KEYS = 4_000_000
const LEFT_ROWS = 14_000_000
const PAD = 'x'.repeat(56)

/** Right rows per key: none for multiples of 3, two for multiples of 5 (not of 3), else one. */
const matches = (k: number) => (k % 3 === 0 ? 0 : k % 5 === 0 ? 2 : 1)

function writeLines(path: string, header: string, rows: number, line: (i: number) => string): number {
  const fd = openSync(path, 'w')
  try {
    writeSync(fd, header + '\n')
    for (let i = 0; i < rows; ) {
      const lines: string[] = []
      for (const end = Math.min(rows, i + 50_000); i < end; i++) lines.push(line(i))
      writeSync(fd, lines.join('\n') + '\n')
    }
  } finally {
    closeSync(fd)
  }
  return statSync(path).size
}

interface Expected {
  n: number
  sv: number
  sw: number
}

/** Writes both files; returns their bytes and each join's row count and sums of v and w. */
function writeFiles(dir: string): { bytes: number; inner: Expected; left: Expected } {
  // The right side: its rows for key k at j = the key's slots, w from the key and the copy.
  const rightRows: number[] = []
  for (let k = 0; k < KEYS; k++) for (let c = 0; c < matches(k); c++) rightRows.push(k * 2 + c)
  const sumW = (k: number) => (matches(k) === 2 ? ((k * 2) % 997) + ((k * 2 + 1) % 997) : (k * 2) % 997)
  let bytes = writeLines(join(dir, 'right.csv'), 'k,w,t', rightRows.length, (j) => `${rightRows[j] >> 1},${rightRows[j] % 997},${PAD}`)
  const inner = { n: 0, sv: 0, sw: 0 }
  const left = { n: 0, sv: 0, sw: 0 }
  bytes += writeLines(join(dir, 'left.csv'), 'k,v,s', LEFT_ROWS, (i) => {
    const k = (i * 7919) % KEYS
    const v = i % 1000
    const m = matches(k)
    const w = m ? sumW(k) : 0
    inner.n += m
    inner.sv += v * m
    inner.sw += w
    left.n += Math.max(m, 1)
    left.sv += v * Math.max(m, 1)
    left.sw += w
    return `${k},${v},${PAD}`
  })
  return { bytes, inner, left }
}

test('a left join (and the inner join in it) of 3× the workers\' memory on 2 × 192 MiB workers: exact, every worker under its limit, none lost, nothing left behind', async (t) => {
  t.timeout(600_000)
  const dir = mkdtempSync(join(tmpdir(), 'spillway-big-join-'))
  const spillDir = mkdtempSync(join(tmpdir(), 'spillway-big-join-spill-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
    rmSync(spillDir, { recursive: true, force: true })
  })
  const { bytes, inner, left } = writeFiles(dir)
  // LocalCluster directly: setupClient keeps every worker at 1 GiB or more.
  const lc = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: WORKER_MEMORY, thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 }, spillDir })
  const client = new Client(lc, { silenceLogs: true })
  t.teardown(async () => {
    await client.close()
    await lc.close()
  })
  const before = Object.values(await schedulerWorkers(client))
  t.true(bytes > 2.8 * before.length * WORKER_MEMORY, `${(bytes / MIB).toFixed(0)} MiB of CSV for ${before.length} × ${WORKER_MEMORY / MIB} MiB`)
  const { peak } = await peakRss(client, async () => {
    const l = frame.readCsv(join(dir, 'left.csv'), { blocksize: '4 MiB' })
    const r = frame.readCsv(join(dir, 'right.csv'), { blocksize: '4 MiB' })
    // One left join, whose matched rows are the inner join's (the inner kind's own kernel is
    // checked on small data elsewhere; the out-of-core path, shuffle and grace buckets, is one).
    const joined = l.join(r, { on: 'k', how: 'left' })
    const started = Date.now()
    const matched = col('w').isNotNull()
    const got = await client.compute(joined.withColumns({ vi: when(matched).then(col('v')).otherwise(0) }).agg({ n: count(), sv: sum('v'), sw: sum('w'), ni: count('w'), svi: sum('vi') }))
    t.log(`left: ${joined.npartitions} outputs in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    const row = got.get(0)!.toJSON() as Record<string, unknown>
    t.deepEqual({ n: Number(row.n), sv: Number(row.sv), sw: Number(row.sw) }, left, 'left')
    t.deepEqual({ n: Number(row.ni), sv: Number(row.svi), sw: Number(row.sw) }, inner, 'inner: the matched rows')
  })
  const after = Object.values(await schedulerWorkers(client))
  t.deepEqual(after.map((w) => w.pid).sort(), before.map((w) => w.pid).sort(), 'no worker lost: the same processes')
  for (const w of before) t.true((peak.get(w.name) ?? 0) < w.memoryLimit, `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / MIB).toFixed(0)} MiB under ${(w.memoryLimit / MIB).toFixed(0)} MiB`)
  t.log(before.map((w) => `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / MIB).toFixed(0)} MiB of ${(w.memoryLimit / MIB).toFixed(0)}`).join(', '))
  for (const w of after) t.is((w.metrics as any).shuffle.heldShards, 0, `${w.name} holds no shard`)
  t.is(client.scheduler.tasks.size, 0, 'no task left on the scheduler')
})

test('a join sizes its outputs by the sides\' files, and broadcasts no one-partition side past 64 MiB of files', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-join-plan-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // Sparse files (rows, then zeros no task reads): 100 MiB each by their size, which is what a join plans by, on no disk.
  const file = (name: string, size: number) => {
    const path = join(dir, name)
    writeFileSync(path, 'k,v\n' + Array.from({ length: 1000 }, (_, i) => `${i},${i}`).join('\n') + '\n')
    if (size) truncateSync(path, size)
    return path
  }
  const big = frame.readCsv(file('big.csv', 100 * MIB), { blocksize: '64 MiB' })
  const whole = frame.readCsv(file('whole.csv', 100 * MIB), { blocksize: '256 MiB' })
  const small = frame.readCsv(file('small.csv', 0), { blocksize: '256 MiB' })
  t.is(big.npartitions, 2)
  t.is(whole.npartitions, 1)
  // 200 MiB of files: shuffled into one output per 32 MiB, not broadcast though one side is one partition.
  t.is(big.join(whole, { on: 'k' }).npartitions, 7)
  t.is(big.join(whole, { on: 'k', npartitions: 3 }).npartitions, 3)
  // A one-partition side of a few KiB is broadcast: one output per partition of the other.
  t.is(big.join(small, { on: 'k' }).npartitions, 2)
})
