import test from 'ava'
import { readdirSync, rmSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { random, schedulerWorkers, type Client } from 'spillway'
import { cluster, sharedCluster, until } from './cluster-helpers'

const SMALL = { chunks: 250_000, seed: 12 }

// One cluster for the tests that leave its workers as they found them (the
// same workers as cluster()'s); the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

/** Spill files by worker directory. */
function spillFiles(dir: string): string[][] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => readdirSync(join(dir, e.name)).filter((f) => f.endsWith('.spill')).map((f) => join(dir, e.name, f)))
}

test.serial('a spill file corrupted or deleted on disk is recomputed: the reduction gives the clean answer', async (t) => {
  // Its own cluster: other memory options, and it counts the tasks its workers ran.
  // A 0.1 target on 1 GiB workers: about half of 400 MB spills.
  const { client, tempDir } = await cluster(t, { memoryTarget: 0.1, memorySpill: 0.3 })
  const x = await client.persist(random.random([50_000_000], { chunks: 1_000_000, seed: 11 }))
  await x.wait()
  await until(() => spillFiles(tempDir).filter((fs) => fs.length >= 2).length === 2, 20_000, 'both workers to spill')
  const clean = [await client.compute(x.sum()), await client.compute(x.mean())]
  const doneBefore = Object.values(await schedulerWorkers(client)).reduce((s, w) => s + (w.metrics as any).taskCounts.done, 0)

  for (const [corrupt, gone] of spillFiles(tempDir)) {
    const bytes = readFileSync(corrupt)
    bytes[bytes.length >> 1] ^= 0xff
    writeFileSync(corrupt, bytes)
    rmSync(gone)
  }
  t.deepEqual([await client.compute(x.sum()), await client.compute(x.mean())], clean)

  const workers = Object.values(await schedulerWorkers(client))
  const doneAfter = workers.reduce((s, w) => s + (w.metrics as any).taskCounts.done, 0)
  t.is(doneAfter - doneBefore, 4, 'exactly the four lost chunks were recomputed')
  t.is(
    workers.reduce((s, w) => s + (w.metrics as any).managedBytes, 0),
    x.nbytes,
    'the unreadable copies were dropped: every chunk is held once',
  )
})

test.serial('a chunk its worker no longer holds is recomputed instead of being waited for forever', async (t) => {
  const x = await client.persist(random.random([4_000_000], SMALL))
  await x.wait()
  const clean = await client.compute(x.sum())
  const [key] = x.keys()
  const w = client.scheduler.tasks.get(key)!.worker!
  // Behind the scheduler's back, as a worker that lost the chunk would be.
  await w.rpc.request({ op: 'release', keys: [key] })
  t.is(await client.compute(x.sum()), clean)
  t.is(client.scheduler.tasks.get(key)!.state, 'memory')
})

test.serial('a chunk that can never be read back fails the reduction with a coded error naming it, and is not lost', async (t) => {
  const x = await client.persist(random.random([4_000_000], SMALL))
  await x.wait()
  const clean = await client.compute(x.sum())
  const key = x.keys()[3]
  // Every worker answers as one whose disk loses that chunk each time.
  const restore: Array<() => void> = []
  for (const w of client.scheduler.workers.values()) {
    const rpc = w.rpc as any
    const request = rpc.request.bind(rpc)
    rpc.request = async (req: any) => {
      const res = await request(req)
      if (req.op !== 'reduce-many') return res
      const partials = res.partials.map((p: unknown, j: number) => (req.keys[j] === key ? null : p))
      return { partials, unreadable: [{ key, code: 'ERR_SPILLWAY_CORRUPT_FRAME', message: 'checksum mismatch' }] }
    }
    restore.push(() => delete rpc.request)
  }
  const err = await t.throwsAsync(() => client.compute(x.sum()), { code: 'ERR_SPILLWAY_CHUNK_LOST' })
  t.true(err!.message.includes(JSON.stringify(key)), err!.message)
  t.regex(err!.message, /after 3 recomputes .*ERR_SPILLWAY_CORRUPT_FRAME: checksum mismatch/)
  for (const r of restore) r()
  t.is(await client.compute(x.sum()), clean)
})
