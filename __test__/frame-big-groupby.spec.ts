// A groupBy whose input is 3× the workers' memory and whose groups alone
// outgrow a worker: through the frame shuffle (the default for a frame of
// many partitions), exact against sums kept while the file was written,
// every worker's measured peak RSS under its limit, nothing left behind.
import test from 'ava'
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, count, first, frame, last, LocalCluster, mean, nUnique, schedulerWorkers, sum, var as variance } from 'spillway'
import { bytesOnDisk, peakRss, until } from './cluster-helpers'

const MIB = 2 ** 20
/** The smallest worker that runs frames with room to spare: a Node process with the addon idles near half of it. */
const LIMIT = 160 * MIB
const KEYS = 1_500_000
const CATS = 6

test('a groupBy of a CSV 3× the workers memory (high- and low-cardinality keys) is exact, every worker under its limit, nothing left', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-big-groupby-'))
  const spillDir = join(dir, 'spill')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const cluster = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: LIMIT, thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 }, spillDir })
  const client = new Client(cluster, { ownsCluster: true, silenceLogs: true })
  t.teardown(() => client.close())
  const workers = Object.values(await schedulerWorkers(client))
  const total = workers.reduce((a, w) => a + w.memoryLimit, 0)

  // Rows of (k, cat, x, note): k walks the keys in a stride (every key about
  // as often, few repeats within a block), x small integers, note a filler
  // the groupBy never reads. The answer is kept per key as it is written.
  const n = new Float64Array(KEYS)
  const s = new Float64Array(KEYS)
  const catN = new Float64Array(CATS)
  const catX = new Float64Array(CATS)
  const file = join(dir, 'rows.csv')
  const fd = openSync(file, 'w')
  writeSync(fd, 'k,cat,x,note\n')
  let written = 0
  let i = 0
  while (written < 3 * total) {
    let chunk = ''
    for (let j = 0; j < 20_000; j++, i++) {
      const k = (i * 7_919) % KEYS
      const c = i % CATS
      const x = (i % 1_000) - 500
      n[k]++
      s[k] += x
      catN[c]++
      catX[c] += x
      chunk += `${k},c${c},${x},filler-${i % 97}-abcdefgh\n`
    }
    written += writeSync(fd, chunk)
  }
  closeSync(fd)
  t.true(statSync(file).size >= 3 * total, `${statSync(file).size} bytes for ${total} bytes of workers`)

  const rows = frame.readCsv(file, { blocksize: 16 * MIB })
  const { value: [byKey, byCat], peak } = await peakRss(client, async () => [
    await client.compute(rows.groupBy('k').agg({ n: count(), s: sum('x'), m: mean('x') })),
    await client.compute(rows.groupBy('cat').agg({ n: count(), s: sum('x'), m: mean('x') })),
  ])

  t.is(byKey.numRows, KEYS)
  const [k, bn, bs, bm] = ['k', 'n', 's', 'm'].map((c) => byKey.getChild(c)!.toArray())
  let wrong = 0
  for (let r = 0; r < KEYS; r++) {
    const key = Number(k[r])
    if (Number(bn[r]) !== n[key] || Number(bs[r]) !== s[key] || Math.abs(bm[r] - s[key] / n[key]) > 1e-9) wrong++
  }
  t.is(wrong, 0, 'every key: count, sum and mean exact')
  t.deepEqual(
    byCat.toArray().map((r: any) => [r.cat, Number(r.n), Number(r.s), r.m]).sort(),
    Array.from({ length: CATS }, (_, c) => [`c${c}`, catN[c], catX[c], catX[c] / catN[c]]).sort(),
  )
  for (const w of workers) t.true((peak.get(w.name) ?? 0) < w.memoryLimit, `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / MIB).toFixed(0)} MiB under ${(w.memoryLimit / MIB).toFixed(0)} MiB`)
  t.log(`${(statSync(file).size / MIB).toFixed(0)} MiB of CSV on 2 × ${LIMIT / MIB} MiB workers; peak rss ${[...peak.values()].map((v) => (v / MIB).toFixed(0)).join(', ')} MiB`)
  t.is(cluster.nannies.reduce((a, x) => a + x.restarts, 0), 0, 'no worker lost')

  // Nothing left: the results let go, no value, shard nor spill file on any worker.
  await until(async () => Object.values(await schedulerWorkers(client)).every((w) => w.tasks.held + w.tasks.processing === 0 && ((w.metrics as any).shuffle?.heldShards ?? 0) === 0), 30_000, 'workers empty')
  t.is(bytesOnDisk(spillDir).files, 0, 'no spill file')
})

test('method shuffle and tree give the same groups for every aggregate (first and last in row order), splitOut outputs; a bad method is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-groupby-method-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const cluster = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: 512 * MIB, thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 }, spillDir: join(dir, 'spill') })
  const client = new Client(cluster, { ownsCluster: true, silenceLogs: true })
  t.teardown(() => client.close())
  const want = new Map<string, { n: number; first?: string; last?: string; seen: Set<string> }>()
  for (let f = 0; f < 4; f++) {
    let text = 'g,s,x\n'
    for (let i = 0; i < 50; i++) {
      const g = `g${(f * 50 + i) % 7}`
      const s = i % 5 === 0 ? '' : `v${(f * 31 + i) % 11}`
      text += `${g},${s},${i % 9}\n`
      const w = want.get(g) ?? { n: 0, seen: new Set<string>() }
      w.n++
      if (s) {
        w.first ??= s
        w.last = s
        w.seen.add(s)
      }
      want.set(g, w)
    }
    writeFileSync(join(dir, `p${f}.csv`), text)
  }
  const rows = frame.readCsv(join(dir, 'p*.csv'), { blocksize: 200 })
  const aggs = { n: count(), u: nUnique('s'), f: first('s'), l: last('s'), v: variance('x'), m: mean('x') }
  const byMethod = async (method: 'tree' | 'shuffle') => {
    const g = rows.groupBy('g').agg(aggs, { method, splitOut: 3 })
    t.is(g.npartitions, 3)
    return (await client.compute(g)).toArray().map((r: any) => ({ g: r.g, n: Number(r.n), u: Number(r.u), f: r.f, l: r.l, v: r.v.toFixed(9), m: r.m.toFixed(9) })).sort((a: any, b: any) => (a.g < b.g ? -1 : 1))
  }
  const shuffled = await byMethod('shuffle')
  t.deepEqual(shuffled, await byMethod('tree'))
  t.deepEqual(
    shuffled.map((r: any) => [r.g, r.n, r.u, r.f, r.l]),
    [...want].sort().map(([g, w]) => [g, w.n, w.seen.size, w.first, w.last]),
  )
  t.throws(() => rows.groupBy('g').agg(aggs, { method: 'hash' as never }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.method[\s\S]*auto, tree, shuffle/ })
})
