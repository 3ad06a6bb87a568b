// Issue 32, item 9 (e), scaled down: many small NDJSON records (their
// items take several times their serialized bytes in memory) grouped on
// 2 × 512 MiB workers: exact, no worker lost, rss under the limit. Before
// splits made room for their items (split-bound.ts), 2 runs of 3 lost
// workers here, one ending in ERR_SPILLWAY_KILLED_WORKER on a split.
import test from 'ava'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, Client, LocalCluster, schedulerWorkers } from 'spillway'
import { GIB } from './cluster-helpers'

const RECORDS = 6_000_000
const KEYS = 50_000
const FILES = 6

async function writeRecords(dir: string): Promise<void> {
  const per = RECORDS / FILES
  for (let f = 0; f < FILES; f++) {
    const out = createWriteStream(join(dir, `part-${f}.ndjson`))
    let chunk = ''
    for (let j = 0; j < per; j++) {
      const i = f * per + j
      // ~45 bytes a line, as the 40 M-record corpus of the issue.
      chunk += `{"k":${(i * 7919) % KEYS},"v":${i % 1000},"s":"${(i % 99991).toString(36)}"}\n`
      if (chunk.length > 1 << 20) {
        if (!out.write(chunk)) await once(out, 'drain')
        chunk = ''
      }
    }
    out.end(chunk)
    await once(out, 'close')
  }
}

test('a groupBy of 6 M small NDJSON records on 2 × 512 MiB workers: exact, the same worker processes before and after, rss under the limit', async (t) => {
  t.timeout(600_000)
  const dir = mkdtempSync(join(tmpdir(), 'spillway-small-records-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await writeRecords(dir)
  // LocalCluster directly: setupClient keeps every worker at 1 GiB or more.
  const spillDir = mkdtempSync(join(tmpdir(), 'spillway-small-records-spill-'))
  const lc = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: 512 * 2 ** 20, thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 }, spillDir })
  const client = new Client(lc, { silenceLogs: true })
  t.teardown(async () => {
    await client.close()
    await lc.close()
    rmSync(spillDir, { recursive: true, force: true })
  })
  const before = Object.values(await schedulerWorkers(client))
  t.is(before.length, 2)
  let peak = new Map<string, number>()
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      for (const w of Object.values(await schedulerWorkers(client))) peak.set(w.name, Math.max(peak.get(w.name) ?? 0, (w.metrics as any).rss ?? 0))
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  const groups = bag
    .readText(join(dir, '*.ndjson'), { blocksize: '64 MiB' })
    .map((line: string) => JSON.parse(line))
    .groupBy('k', { npartitions: 24 })
    .map(([k, list]: [number, { v: number }[]]) => [k, list.length, list.reduce((a, r) => a + r.v, 0)])
  const got = (await client.compute(groups)) as [number, number, number][]
  sampling = false
  await sampler
  const expected = new Map<number, [number, number]>()
  for (let i = 0; i < RECORDS; i++) {
    const k = (i * 7919) % KEYS
    const e = expected.get(k) ?? [0, 0]
    e[0]++
    e[1] += i % 1000
    expected.set(k, e)
  }
  t.is(got.length, expected.size)
  let wrong = 0
  for (const [k, n, sum] of got) if (!isDeepEqual([n, sum], expected.get(k))) wrong++
  t.is(wrong, 0, 'every group exact')
  const after = Object.values(await schedulerWorkers(client))
  t.deepEqual(after.map((w) => w.pid).sort(), before.map((w) => w.pid).sort(), 'no worker lost: the same processes')
  for (const w of before) t.true((peak.get(w.name) ?? 0) < w.memoryLimit, `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / GIB).toFixed(2)} GiB under ${(w.memoryLimit / GIB).toFixed(2)} GiB`)
  t.log(before.map((w) => `${w.name}: peak rss ${((peak.get(w.name) ?? 0) / 2 ** 20).toFixed(0)} MiB of ${(w.memoryLimit / 2 ** 20).toFixed(0)}`).join(', '))
})

function isDeepEqual(a: unknown[], b: unknown[] | undefined): boolean {
  return !!b && a.length === b.length && a.every((x, i) => x === b[i])
}
