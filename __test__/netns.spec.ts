// Several "nodes" on one machine: Linux network namespaces joined by a
// bridge, each with its own address and host name, `spillway worker` in
// each. One node's link is cut mid-pipeline: the scheduler takes its
// worker as lost once it falls silent (workerTtl) and the others make its
// values again, so the result is exact.
import test from 'ava'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { random, schedulerWorkers, setupClient } from 'spillway'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')
const id = process.pid % 200
const NET = `10.231.${id}`
const BRIDGE = `spwbr${id}`
const NODES = [1, 2, 3].map((i) => ({ ns: `spw${id}n${i}`, veth: `spwv${id}n${i}`, ip: `${NET}.${10 + i}`, host: `node${i}` }))

function sh(cmd: string[]): { ok: boolean; err: string } {
  const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8' })
  return { ok: r.status === 0, err: (r.stderr || r.error?.message || '').trim() }
}

/** Makes the bridge and the namespaces; a reason when this machine cannot. */
function network(): string | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'network namespaces need Linux and root'
  const steps: string[][] = [
    ['ip', 'link', 'add', BRIDGE, 'type', 'bridge'],
    ['ip', 'addr', 'add', `${NET}.1/24`, 'dev', BRIDGE],
    ['ip', 'link', 'set', BRIDGE, 'up'],
  ]
  for (const n of NODES) {
    steps.push(
      ['ip', 'netns', 'add', n.ns],
      ['ip', 'link', 'add', n.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n.ns],
      ['ip', 'link', 'set', n.veth, 'master', BRIDGE],
      ['ip', 'link', 'set', n.veth, 'up'],
      ['ip', '-n', n.ns, 'addr', 'add', `${n.ip}/24`, 'dev', 'eth0'],
      ['ip', '-n', n.ns, 'link', 'set', 'eth0', 'up'],
      ['ip', '-n', n.ns, 'link', 'set', 'lo', 'up'],
    )
  }
  for (const s of steps) {
    const r = sh(s)
    if (!r.ok) return `${s.join(' ')}: ${r.err}`
  }
  return undefined
}

function teardownNetwork() {
  for (const n of NODES) sh(['ip', 'netns', 'del', n.ns])
  sh(['ip', 'link', 'del', BRIDGE])
}

test('workers in three network namespaces; one node’s link cut mid-pipeline: the exact result from the other two', async (t) => {
  t.timeout(4 * 60_000)
  const why = network()
  t.teardown(teardownNetwork)
  if (why) {
    t.log(`skipped: ${why}`)
    return t.pass()
  }
  const dir = mkdtempSync(join(tmpdir(), 'spillway-netns-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'scheduler.json')
  const { client, cluster } = await setupClient({
    workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, silenceLogs: true,
    schedulerFile: file, schedulerAddress: `tcp://${NET}.1:0`, localWorkers: 0, workerTtl: 3,
  })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const children: ChildProcess[] = []
  t.teardown(() => {
    // The cut node's worker never hears the scheduler go: its whole process group goes.
    for (const c of children) {
      try {
        if (c.pid) process.kill(-c.pid, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
  })
  for (const n of NODES) {
    const cmd = `hostname ${n.host} && exec ${process.execPath} ${BIN} worker --scheduler-file ${file} --host ${n.ip} --max-workers 1 --max-mem-gb 1.5 --reserve-mem-gb 0 --temp-base-dir ${dir} --death-timeout 5`
    children.push(spawn('ip', ['netns', 'exec', n.ns, 'unshare', '--uts', 'sh', '-c', cmd], { detached: true, stdio: 'ignore' }))
  }
  await client.waitForWorkers(3, { timeout: 90_000 })
  const before = Object.values(await schedulerWorkers(client))
  t.deepEqual(before.map((w) => w.host).sort(), ['node1', 'node2', 'node3'])
  for (const w of before) t.true(w.address.startsWith(`tcp://${NET}.`), w.address)

  // Integers, so "exact" means equal: each chunk's sum is made where it lives.
  const x = await client.persist(random.randint(0, 1000, [6000, 6000], { chunks: [500, 500], seed: 11 }))
  await x.wait()
  const whole = await client.compute(x.sum())
  const cols = client.map((i: number) => i * 1000 + 7, Array.from({ length: 30 }, (_, i) => i), { pure: false })
  const total = () => client.submit((...v: number[]) => v.reduce((a, b) => a + b, 0), cols)
  const expected = await total().result()

  // Cut node2 off: no reset reaches anyone, its packets just stop.
  const cut = NODES[1]
  const held = Object.values(await schedulerWorkers(client)).find((w) => w.host === cut.host)!.tasks.held
  t.true(held > 0, 'the cut node held chunks')
  t.true(sh(['ip', 'link', 'set', cut.veth, 'down']).ok)
  const started = Date.now()
  t.is(await client.compute(x.sum()), whole, 'the sum, with the cut node’s chunks made again')
  t.is(await total().result(), expected, 'the futures, with the cut node’s results made again')
  t.log(`results ${((Date.now() - started) / 1000).toFixed(1)} s after the cut`)
  const after = Object.values(await schedulerWorkers(client))
  t.deepEqual(after.map((w) => w.host).sort(), ['node1', 'node3'])
  t.is(client.scheduler.lostWorkers, 1)
  // Cut off, the node's own workers hear no pings, exit, and find no scheduler for --death-timeout: no orphan.
  const code = await new Promise((resolve) => (children[1].exitCode !== null ? resolve(children[1].exitCode) : children[1].once('exit', resolve)))
  t.is(code, 1)
})
