// Workers started elsewhere: `spillway worker` processes joining a scheduler
// over TCP on loopback, as they would from other nodes of a job.
import test from 'ava'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { random, schedulerWorkers, setupClient } from 'spillway'
import { dial } from '../src/comm/address'
import { offerHandshake } from '../src/comm/handshake'
import { SocketTransport } from '../src/comm/socket-transport'
import { readSchedulerFile, readSecretFile, removeSchedulerFile, secretFileOf, writeSchedulerFile } from '../src/comm/scheduler-file'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')
const SIZE = ['--max-workers', '2', '--max-mem-gb', '3', '--reserve-mem-gb', '1']

function worker(args: string[], env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; exited: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, 'worker', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (c) => (stderr += c))
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, stderr })))
  return { child, exited }
}

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-remote-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('spillway worker processes join over TCP: the pressure test and a user pipeline across workers; closing the cluster ends them and removes the files', async (t) => {
  t.timeout(3 * 60_000)
  const dir = scratch(t)
  const file = join(dir, 'scheduler.json')
  const setup = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file, localWorkers: 0 })
  const { client, cluster } = setup
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  // The file and its secret: 0600, the address on loopback.
  const info = await readSchedulerFile(file, 1000)
  t.regex(info.address, /^tcp:\/\/127\.0\.0\.1:\d+$/)
  t.is(info.pid, process.pid)
  for (const f of [file, secretFileOf(file)]) t.is(statSync(f).mode & 0o777, 0o600, f)
  // --nworkers: exactly two, whatever this node's cores would suggest.
  const w = worker(['--scheduler-file', file, '--nworkers', '2', '--max-mem-gb', '3', '--reserve-mem-gb', '1', '--temp-base-dir', dir])
  t.teardown(() => void w.child.kill('SIGKILL'))
  await client.waitForWorkers(2, { timeout: 60_000 })
  const joined = Object.values(await schedulerWorkers(client))
  t.is(joined.length, 2)
  for (const j of joined) t.regex(j.address, /^tcp:\/\/127\.0\.0\.1:\d+$/)

  // The recipe's pressure test: 3.2 GB on 2 × 1 GiB workers spills, and the mean is right.
  const x = await client.persist(random.random([20000, 20000], { chunks: [1000, 1000], seed: 42 }))
  await x.wait()
  const mean = await client.compute(x.mean())
  t.true(Math.abs(mean - 0.5) < 1e-3, String(mean))
  const spilled = Object.values(await schedulerWorkers(client)).reduce((n, w) => n + (w.metrics as any).spilledBytes.disk, 0)
  t.true(spilled > 1e9, `spilled ${spilled}`)
  x.release()

  // User code whose tasks take other workers' results.
  const parts = client.map((i: number) => new Float64Array(250_000).fill(i), [1, 2, 3, 4, 5, 6, 7, 8], { pure: false })
  const total = client.submit((...cols: Float64Array[]) => cols.reduce((s, c) => s + c.reduce((a, b) => a + b, 0), 0), parts)
  t.is(await total.result(), 250_000 * 36)
  const where = new Set(parts.map((f) => client.scheduler.tasks.get(f.key)?.worker?.address))
  t.is(where.size, 2, 'the parts were made on both workers')

  await client.close()
  await cluster.close()
  const end = await w.exited
  t.is(end.code, 0, end.stderr)
  t.regex(end.stderr, /the cluster closed/)
  t.false(existsSync(file) || existsSync(secretFileOf(file)), 'the scheduler file and its secret are removed')
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('spillway-')), [], 'the workers’ spill directories are removed')
})

test('a worker without the cluster’s secret is refused and logged; one of another spillway version is refused; the scheduler goes on', async (t) => {
  t.timeout(2 * 60_000)
  const dir = scratch(t)
  const file = join(dir, 'scheduler.json')
  const logged: string[] = []
  const push = (m: string) => void logged.push(m)
  const logger = { info: push, warn: push, error: push, debug() {} }
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, schedulerFile: file, logger })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const { address } = await readSchedulerFile(file, 1000)
  const bad = join(dir, 'bad.secret')
  writeFileSync(bad, 'ab'.repeat(32), { mode: 0o600 })
  const w = worker(['--scheduler', address, '--secret-file', bad, ...SIZE])
  const end = await w.exited
  t.is(end.code, 1, end.stderr)
  // The scheduler says the proof failed, so the worker knows it is the secret, and does not try again.
  t.regex(end.stderr, /refused this worker's proof of the cluster secret: this worker's secret is not the cluster's \(use the FILE\.secret written beside the scheduler file\)/)
  t.notRegex(end.stderr, /dropped/)
  t.true(logged.some((l) => /refused a worker connection from 127\.0\.0\.1:\d+: peer does not hold the cluster secret/.test(l)), logged.join('\n'))

  // Another version: the right secret, a hello from spillway 0.0.0-other.
  const socket = await dial(address)
  const rest = await offerHandshake(socket, readSecretFile(secretFileOf(file)))
  const link = new SocketTransport<any, any>(socket, rest)
  link.send({ kind: 'hello', version: '0.0.0-other', host: 'elsewhere', pid: 1, name: 'old-0.0', nthreads: 1, memoryLimit: 2 ** 30, spillDir: dir, dataAddress: 'tcp://127.0.0.1:0' })
  const answer = await link.next(5000)
  t.like(answer, { kind: 'refused', code: 'ERR_SPILLWAY_VERSION' })
  t.regex(answer.reason, /runs spillway 0\.0\.0-other and the scheduler \d+\.\d+\.\d+/)
  // A stranger that sends garbage gets nothing decoded and changes nothing.
  const stranger = await dial(address)
  stranger.on('error', () => {})
  stranger.resume()
  stranger.write(Buffer.alloc(4096, 0x41))
  await new Promise((r) => stranger.once('close', r))
  // Two workers of the wrong secret, the other version, the stranger.
  t.is(cluster.remote!.refused, 4)
  t.true(logged.some((l) => /peer is not a spillway endpoint/.test(l)))
  t.is(client.scheduler.workers.size, 1)
  t.is(await client.submit((a: number, b: number) => a + b, [2, 3]).result(), 5)
})

test('the scheduler file: written atomically with its secret, both 0600; a reader waits for it to appear and never takes half a file', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'sched.json')
  const secret = Buffer.alloc(32, 7)
  // A half-written file (what a reader of a non-atomic writer could see) is not taken.
  writeFileSync(file, '{"address": "tcp://10.0.0.1:8786", "vers')
  const reading = readSchedulerFile(file, 5000)
  await new Promise((r) => setTimeout(r, 300))
  writeSchedulerFile(file, { address: 'tcp://10.0.0.1:8786', version: '1.2.3', jobId: '42', pid: 7 }, secret)
  t.deepEqual(await reading, { address: 'tcp://10.0.0.1:8786', version: '1.2.3', jobId: '42', pid: 7 })
  t.deepEqual(readSecretFile(secretFileOf(file)), secret)
  t.deepEqual(readdirSync(dir).sort(), ['sched.json', 'sched.json.secret'], 'no temp file left')
  for (const f of readdirSync(dir)) t.is(statSync(join(dir, f)).mode & 0o777, 0o600)
  removeSchedulerFile(file)
  t.deepEqual(readdirSync(dir), [])
  const e = await t.throwsAsync(readSchedulerFile(file, 200))
  t.is((e as any).code, 'ERR_SPILLWAY_NO_SCHEDULER')
  writeFileSync(join(dir, 'short'), 'abc')
  t.throws(() => readSecretFile(join(dir, 'short')), { message: /does not hold 64 hex digits/ })
})

/** A CA and a certificate for 127.0.0.1 signed by it, made with openssl; undefined where there is none. */
function certificates(dir: string): { ca: string; cert: string; key: string } | undefined {
  const run = (args: string[]) => require('node:child_process').spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' })
  if (run(['version']).status !== 0) return undefined
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n')
  const steps = [
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=spillway test CA'],
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'node.key', '-out', 'node.csr', '-subj', '/CN=127.0.0.1'],
    ['x509', '-req', '-in', 'node.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'node.pem', '-days', '1', '-extfile', 'san.ext'],
  ]
  for (const s of steps) if (run(s).status !== 0) return undefined
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'node.pem'), key: join(dir, 'node.key') }
}

test('TLS: with a certificate the scheduler listens on tls://; a worker given the CA joins and works; one without it is turned away at the TLS handshake', async (t) => {
  t.timeout(2 * 60_000)
  const dir = scratch(t)
  const certs = certificates(dir)
  if (!certs) {
    t.log('skipped: no openssl here to make a test certificate')
    return t.pass()
  }
  const file = join(dir, 'scheduler.json')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 1, dashboard: false, silenceLogs: true, schedulerFile: file, localWorkers: 0, tlsCert: certs.cert, tlsKey: certs.key })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const { address } = await readSchedulerFile(file, 1000)
  t.regex(address, /^tls:\/\/127\.0\.0\.1:\d+$/)
  const without = worker(['--scheduler-file', file, '--max-workers', '1', '--max-mem-gb', '2', '--reserve-mem-gb', '0'])
  const end = await without.exited
  t.is(end.code, 1)
  t.regex(end.stderr, /failed the TLS handshake: .*(self.signed|certificate).*--tls-ca/)
  const w = worker(['--scheduler-file', file, '--tls-ca', certs.ca, '--max-workers', '1', '--max-mem-gb', '2', '--reserve-mem-gb', '0'])
  t.teardown(() => void w.child.kill('SIGKILL'))
  await client.waitForWorkers(1, { timeout: 60_000 })
  t.is(await client.submit((a: number, b: number) => a * b, [6, 7]).result(), 42)
  // Plain TCP to the TLS port: turned away before any of its bytes is read as ours.
  const plain = await dial(address.replace('tls://', 'tcp://'))
  plain.on('error', () => {})
  plain.resume()
  plain.write(Buffer.alloc(256, 0x41))
  await new Promise((r) => plain.once('close', r))
  t.true(cluster.remote!.refused >= 1)
  t.is(client.scheduler.workers.size, 1)
})
