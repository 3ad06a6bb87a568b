import test from 'ava'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { schedulerWorkers, setupClient } from 'spillway'
import { alive, cluster, PRESSURE, until } from './cluster-helpers'

const FIX = join(__dirname, 'fixtures', 'tasks')
const esm = (name: string) => ({ module: join(FIX, 'esm.mjs'), name })

function column(i: number, n: number): Float64Array {
  const out = new Float64Array(n)
  for (let j = 0; j < n; j++) out[j] = ((i * 7919 + j * 104729) & 1048575) * 0.25
  return out
}
const total = (a: Float64Array) => a.reduce((x, y) => x + y, 0)

/** Files left under `dir` (spill files and sockets), recursively. */
function files(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...files(join(dir, e.name)).map((f) => join(e.name, f)))
    else out.push(e.name)
  }
  return out
}

for (const moment of ['while the map runs', 'after the map, while the reduction runs', 'after everything is computed']) {
  test(`a worker SIGKILLed ${moment} loses nothing: the exact result, and no files left`, async (t) => {
    const { client, tempDir } = await cluster(t)
    const n = 2_000_000
    const count = 24
    const parts = Array.from({ length: count }, (_, i) => client.submit(esm('column'), [i, n]))
    const sums = client.map(esm('total'), parts)
    const grand = client.submit(esm('sumAll'), [sums])
    const kill = async () => {
      const victim = Object.values(await schedulerWorkers(client))[0]
      process.kill(victim.pid, 'SIGKILL')
      await until(() => !alive(victim.pid), 5_000, 'the worker to die')
    }
    const s = client.scheduler
    if (moment === 'while the map runs') {
      await until(() => parts.filter((p) => p.status === 'finished').length >= 4, 20_000, 'some parts')
      await kill()
    } else if (moment.startsWith('after the map')) {
      await until(() => parts.every((p) => p.status === 'finished') && sums.some((p) => p.status === 'pending'), 30_000, 'the map to finish')
      await kill()
    } else {
      await grand.result()
      await kill()
    }
    let expect = 0
    const each = Array.from({ length: count }, (_, i) => total(column(i, n)))
    for (const v of each) expect += v
    t.deepEqual(await client.gather(sums), each)
    t.is(await grand.result(), expect)
    // A value the dead worker held comes back exact from the survivors.
    t.deepEqual(await parts[0].result(), column(0, n))
    t.true(s.lostWorkers >= 1)
    await client.close()
    await until(() => {
      try {
        return files(tempDir).length === 0
      } catch {
        return true
      }
    }, 10_000, 'no files left')
    t.pass()
  })
}

test('scattered data survives the death of the worker holding it', async (t) => {
  const { client } = await cluster(t)
  const data = Buffer.from(column(5, 1_000_000).buffer)
  const big = await client.scatter(data)
  await big.settled()
  const holder = client.scheduler.tasks.get(big.key)!.worker!
  process.kill(holder.pid, 'SIGKILL')
  await until(() => !alive(holder.pid), 5_000, 'the holder to die')
  const back = (await big.result()) as Buffer
  t.true(Buffer.isBuffer(back))
  t.true(back.equals(data))
  t.is(await client.submit((b: Buffer) => b.length, [big]).result(), data.length)
  t.not(client.scheduler.tasks.get(big.key)!.worker!.pid, holder.pid)
})

test('a worker killed while it starts is started again by its nanny; setupClient still resolves', async (t) => {
  const killed: number[] = []
  // Kill each fresh worker process the moment it appears, twice.
  const timer = setInterval(() => {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number)) {
      if (killed.length >= 2 || killed.includes(pid)) continue
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
        if (ppid !== process.pid) continue
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker/entry')) continue
        process.kill(pid, 'SIGKILL')
        killed.push(pid)
      } catch {
        /* gone already */
      }
    }
  }, 1)
  let setup
  try {
    setup = await setupClient({ ...PRESSURE } as any)
  } finally {
    clearInterval(timer)
  }
  t.teardown(() => setup.cluster.close())
  t.is(killed.length, 2)
  t.is(Object.keys(setup.client.nthreads()).length, 2)
  t.is(await setup.client.submit((a: number) => a + 1, [1]).result(), 2)
})
