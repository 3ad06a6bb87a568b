// Bags under the memory limit: partitions are managed memory, spilled by
// the same LRU, and a partition lost with its worker is made again from its
// source.
import test from 'ava'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, schedulerWorkers, workerSpillBytes } from 'spillway'
import { cluster, GIB, until } from './cluster-helpers'

test('a persisted bag of 1.5 times the workers memory spills and comes back exact', async (t) => {
  const { client } = await cluster(t, { maxMemGb: 2, reserveMemGb: 0 })
  const workers = await schedulerWorkers(client)
  const limit = Object.values(workers).reduce((a, w) => a + w.memoryLimit, 0)
  const parts = 48
  const perPart = Math.ceil((1.5 * limit) / parts / 1024)
  // Each item a distinct 1 KiB string carrying its numbers, so nothing is shared or interned.
  const items = bag
    .fromSequence(Array.from({ length: parts }, (_, i) => i), { npartitions: parts })
    .flatMap((i: number, n: number) => Array.from({ length: n }, (_, j) => `${i}:${j}:`.padEnd(1024, String.fromCharCode(97 + ((i + j) % 26)))), perPart)
  const kept = await client.persist(items)
  const sumOf = (s: string) => {
    const [i, j] = s.split(':')
    return Number(i) * 1_000_003 + Number(j)
  }
  const count = await client.compute(kept.count())
  t.is(count, parts * perPart)
  const total = await client.compute(kept.map(sumOf).sum())
  let expected = 0
  for (let i = 0; i < parts; i++) for (let j = 0; j < perPart; j++) expected += i * 1_000_003 + j
  t.is(total, expected)
  const after = await schedulerWorkers(client)
  // The spilled values' size in memory: on disk they are far smaller (the padding compresses).
  const spilled = Object.values(after).reduce((a, w) => a + ((w.metrics as any).spilledBytes?.memory ?? 0), 0)
  t.true(spilled > 0.25 * GIB, `spilled ${(spilled / GIB).toFixed(2)} GiB`)
  t.true(Object.values(after).some((w) => workerSpillBytes(w.metrics) > 0))
  for (const w of Object.values(after)) t.true((w.metrics as any).rss < w.memoryLimit, `${w.name} under its limit`)
  kept.release()
})

test('a worker SIGKILLed in the middle of a bag loses nothing: the exact result', async (t) => {
  const { client } = await cluster(t)
  const dir = mkdtempSync(join(tmpdir(), 'spillway-bag-kill-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  let expected = 0
  for (let f = 0; f < 8; f++) {
    const lines: string[] = []
    for (let i = 0; i < 20_000; i++) {
      lines.push(String(f * 100_000 + i))
      expected += f * 100_000 + i
    }
    writeFileSync(join(dir, `n${f}.txt`), lines.join('\n') + '\n')
  }
  // Slow enough per partition that the kill lands mid-bag.
  const slow = bag.readText(join(dir, '*.txt'), { blocksize: 16_384 }).map(Number).mapPartitions((xs: Iterable<number>) => {
    const end = Date.now() + 40
    while (Date.now() < end);
    return xs
  })
  const pending = client.compute(slow.sum())
  const workers = Object.values(await schedulerWorkers(client))
  await until(() => client.scheduler.totalTasks > 10, 20_000, 'bag tasks to start')
  await new Promise((r) => setTimeout(r, 300))
  process.kill(workers[0].pid, 'SIGKILL')
  t.is(await pending, expected)
})

test('files written by toTextfiles are complete after a worker is SIGKILLed mid-write, and no temporary file is left', async (t) => {
  const { client } = await cluster(t)
  const dir = mkdtempSync(join(tmpdir(), 'spillway-bag-write-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const parts = 12
  const slow = bag.fromSequence(Array.from({ length: parts * 1000 }, (_, i) => i), { npartitions: parts }).mapPartitions((xs: Iterable<number>) => {
    const end = Date.now() + 250
    while (Date.now() < end);
    return [...xs].map(String)
  })
  const pending = client.compute(slow.toTextfiles(join(dir, 'part-*.txt.zst')))
  const workers = Object.values(await schedulerWorkers(client))
  await until(() => readdirSync(dir).some((f) => f.endsWith('.zst')), 20_000, 'a first file')
  process.kill(workers[1].pid, 'SIGKILL')
  const paths = await pending
  t.is(paths.length, parts)
  const { decompressFile } = await import('../src/native/file-codecs')
  for (const [i, p] of paths.entries()) {
    const text = (await decompressFile(readFileSync(p), 'zstd')).toString()
    t.deepEqual(text.trim().split('\n').map(Number), Array.from({ length: 1000 }, (_, j) => i * 1000 + j), p)
  }
  t.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [])
})
