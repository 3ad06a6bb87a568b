// Hardening (issue 21): every option checked when the config is made (or,
// for files, when setupClient starts, before any worker), with the field named.

import test from 'ava'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { computeMemorySpec, detectResources, setupClient, SetupConfig, SpillwayError, GIB } from 'spillway'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')
const BASE = { workloadType: 'cpu', maxWorkers: 2, dashboard: false, silenceLogs: true } as const

function fields(err: unknown): string[] {
  return ((err as SpillwayError).details.problems as Array<{ field: string }>).map((p) => p.field)
}

test('NaN and Infinity are shown as themselves in ConfigError messages', (t) => {
  const nan = t.throws(() => new SetupConfig({ maxMemGb: NaN }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
  t.regex(nan.message, /maxMemGb: got NaN;/)
  const inf = t.throws(() => new SetupConfig({ memoryTarget: Infinity, dashboardPort: -Infinity }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
  t.regex(inf.message, /memoryTarget: got Infinity;/)
  t.regex(inf.message, /dashboardPort: got -Infinity;/)
  t.notRegex(inf.message, /got null/)
})

test('localWorkers is bounded when the config is made', (t) => {
  for (const localWorkers of [1e6, 1025]) {
    const err = t.throws(() => new SetupConfig({ localWorkers }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' })
    t.deepEqual(fields(err), ['localWorkers'])
    t.regex(err.message, /0–1024/)
  }
  t.is(new SetupConfig({ localWorkers: 3 }).localWorkers, 3)
})

test('localWorkers shares the memory budget: sized within it, or refused naming localWorkers and the sizes', async (t) => {
  const resources = await detectResources()
  const spec = computeMemorySpec(new SetupConfig({ ...BASE, maxMemGb: 3, reserveMemGb: 1, localWorkers: 2 }), resources)
  t.is(spec.nWorkers, 2)
  t.is(spec.perWorkerBytes, GIB)
  t.true(spec.nWorkers * spec.perWorkerBytes <= spec.usableBytes)
  // 1.5 GiB usable is a budget for one worker; two are refused before anything starts.
  const err = (await t.throwsAsync(() => setupClient({ ...BASE, maxMemGb: 2.5, reserveMemGb: 1, localWorkers: 2 }))) as SpillwayError
  t.is(err.code, 'ERR_SPILLWAY_INSUFFICIENT_MEMORY')
  t.is(err.details.field, 'localWorkers')
  t.is(err.details.localWorkers, 2)
  t.is(err.details.usableBytes, 1.5 * GIB)
  t.is(err.details.perWorkerBytes, 0.75 * GIB)
  t.regex(err.message, /localWorkers: 2 workers would get 0\.75 GiB each of 1\.50 GiB usable/)
})

test('schedulerAddress with a port past 65535 or a dotted host that is no IPv4 address is refused when the config is made', (t) => {
  for (const schedulerAddress of ['tcp://127.0.0.1:99999', 'tcp://999.1.1.1:8786', 'tls://[::zz]:1', 'tcp://bad_host!:1']) {
    const err = t.throws(() => new SetupConfig({ schedulerAddress }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' }, schedulerAddress)
    t.deepEqual(fields(err), ['schedulerAddress'])
  }
  for (const schedulerAddress of ['tcp://127.0.0.1:0', 'tcp://node-1.cluster:65535', 'tls://[::1]:8786', 'tcp://255.255.255.255:1']) {
    t.is(new SetupConfig({ schedulerAddress }).schedulerAddress, schedulerAddress)
  }
})

test('file options that cannot be used fail setupClient with ERR_SPILLWAY_INVALID_CONFIG naming the field, before any worker starts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-files-'))
  const cert = join(dir, 'cert.pem')
  writeFileSync(cert, 'not checked here')
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{ schedulerFile: join(dir, 'no-such-dir', 'scheduler.json') }, ['schedulerFile']],
    [{ tlsCert: join(dir, 'missing-cert.pem'), tlsKey: join(dir, 'missing-key.pem') }, ['tlsCert', 'tlsKey']],
    [{ tlsCert: cert, tlsKey: cert, tlsCa: join(dir, 'missing-ca.pem') }, ['tlsCa']],
    [{ tlsCert: dir, tlsKey: cert }, ['tlsCert']],
    [{ tempBaseDir: '/proc' }, ['tempBaseDir']],
  ]
  for (const [options, want] of cases) {
    const err = await t.throwsAsync(() => setupClient({ ...BASE, maxMemGb: 3, reserveMemGb: 1, ...options }), { code: 'ERR_SPILLWAY_INVALID_CONFIG' }, JSON.stringify(options))
    t.deepEqual(fields(err), want, JSON.stringify(options))
  }
})

test('a malformed scheduler file is reported as malformed, not as missing', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-sf-'))
  const file = join(dir, 'scheduler.json')
  writeFileSync(file, '{"address": 42')
  writeFileSync(`${file}.secret`, `${'ab'.repeat(32)}\n`, { mode: 0o600 })
  const run = spawnSync(process.execPath, [BIN, 'worker', '--scheduler-file', file, '--death-timeout', '1'], { encoding: 'utf8', timeout: 60_000 })
  t.not(run.status, 0)
  t.regex(run.stderr, /scheduler file .*scheduler\.json is malformed: it is not JSON/)
  t.notRegex(run.stderr, /no scheduler file/)
  writeFileSync(file, '{"address": 42}')
  const again = spawnSync(process.execPath, [BIN, 'worker', '--scheduler-file', file, '--death-timeout', '1'], { encoding: 'utf8', timeout: 60_000 })
  t.regex(again.stderr, /is malformed: it is JSON without the string fields address and version/)
})
