import test from 'ava'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { ConfigError, createSpillDir, resolveSpillBase, SetupConfig } from 'spillway'
import { scratch } from './helpers'

const run = promisify(execFile)
const DIST = join(__dirname, '..', 'dist', 'index.js')

test('a fresh 0700 directory under tempBaseDir, removed by remove() (idempotent)', async (t) => {
  const base = scratch(t)
  const config = new SetupConfig({ tempBaseDir: base })
  const a = await createSpillDir(config, { env: { PBS_JOBFS: tmpdir() } })
  const b = await createSpillDir(config)
  t.not(a.path, b.path, 'one directory per cluster')
  t.is(dirname(a.path), base)
  t.regex(a.path, /\/spillway-[^/]+$/)
  t.is(a.base, base)
  t.is(a.baseSource, 'tempBaseDir', 'tempBaseDir wins over $PBS_JOBFS')
  t.is(statSync(a.path).mode & 0o777, 0o700)
  t.true(a.freeBytes > 0)
  t.is(a.warning, undefined)
  writeFileSync(join(a.path, 'chunk-0'), 'spilled')
  await a.remove()
  t.false(existsSync(a.path))
  await t.notThrowsAsync(() => a.remove())
  await b.remove()
})

test('base precedence: $PBS_JOBFS, else $TMPDIR, else the OS temp dir; stale variables fall through', async (t) => {
  const jobfs = join(scratch(t), 'jobfs')
  const tmp = join(scratch(t), 'tmp')
  mkdirSync(jobfs)
  mkdirSync(tmp)
  const config = new SetupConfig()
  const gadi = await createSpillDir(config, { env: { PBS_JOBFS: jobfs, TMPDIR: tmp } })
  t.is(gadi.baseSource, 'PBS_JOBFS')
  t.is(dirname(gadi.path), jobfs, 'spill goes under $PBS_JOBFS on Gadi')
  await gadi.remove()
  t.like(await resolveSpillBase(config, { env: { TMPDIR: tmp } }), { base: tmp, baseSource: 'TMPDIR' })
  t.like(await resolveSpillBase(config, { env: { PBS_JOBFS: join(jobfs, 'gone'), TMPDIR: tmp } }), { baseSource: 'TMPDIR' })
  t.like(await resolveSpillBase(config, { env: {} }), { base: tmpdir(), baseSource: 'os' })
  t.like(await resolveSpillBase(config, { env: { PBS_JOBFS: '', TMPDIR: '  ' } }), { baseSource: 'os' })
})

test('a tempBaseDir that is missing, not a directory or not writable is a ConfigError naming tempBaseDir', async (t) => {
  const dir = scratch(t)
  const missing = join(dir, 'nope')
  const err = await t.throwsAsync(() => createSpillDir(new SetupConfig({ tempBaseDir: missing })), { instanceOf: ConfigError })
  t.like((err as ConfigError).problems[0], { field: 'tempBaseDir', value: missing })
  t.regex(err!.message, /does not exist/)
  const file = join(dir, 'file')
  writeFileSync(file, '')
  await t.throwsAsync(() => resolveSpillBase(new SetupConfig({ tempBaseDir: file })), { message: /tempBaseDir.*not a directory/ })
  if (process.getuid?.() !== 0) {
    const ro = join(dir, 'ro')
    mkdirSync(ro, { mode: 0o500 })
    await t.throwsAsync(() => resolveSpillBase(new SetupConfig({ tempBaseDir: ro })), { message: /tempBaseDir.*not writable/ })
  }
})

test('low free space gives a warning, printed to stderr unless silent', async (t) => {
  const base = scratch(t)
  const printed: string[] = []
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string) => (printed.push(String(chunk)), true)) as typeof process.stderr.write
  try {
    const loud = await createSpillDir(new SetupConfig({ tempBaseDir: base }), { expectedSpillBytes: Number.MAX_SAFE_INTEGER })
    t.regex(loud.warning!, /less than the .* GiB the workers could spill/)
    t.is(printed.filter((l) => l.includes('[spillway] warn: ')).length, 1)
    await loud.remove()
    const quiet = await createSpillDir(new SetupConfig({ tempBaseDir: base, silenceLogs: true }), { expectedSpillBytes: Number.MAX_SAFE_INTEGER })
    t.truthy(quiet.warning, 'still returned when silent')
    await quiet.remove()
    const told = await createSpillDir(new SetupConfig({ tempBaseDir: base }), { expectedSpillBytes: Number.MAX_SAFE_INTEGER, silent: true })
    await told.remove()
    const roomy = await createSpillDir(new SetupConfig({ tempBaseDir: base }), { expectedSpillBytes: 1 })
    t.is(roomy.warning, undefined)
    await roomy.remove()
  } finally {
    process.stderr.write = write
  }
  t.is(printed.filter((l) => l.includes('[spillway] warn: ')).length, 1)
  const jobfs = await resolveSpillBase(new SetupConfig(), { env: { PBS_JOBFS: base }, expectedSpillBytes: Number.MAX_SAFE_INTEGER })
  t.regex(jobfs.warning!, /#PBS -l jobfs=/)
})

const CHILD = (base: string, wait: boolean | 'busy', own = '') => `
const { createSpillDir, SetupConfig } = require(${JSON.stringify(DIST)})
${own}
createSpillDir(new SetupConfig({ tempBaseDir: ${JSON.stringify(base)} })).then((d) => {
  require('node:fs').writeFileSync(require('node:path').join(d.path, 'chunk'), 'x')
  console.log(d.path)
  ${wait === 'busy' ? 'setTimeout(() => { const end = Date.now() + 60_000; while (Date.now() < end); console.log("finished"); }, 50)' : wait ? 'setInterval(() => {}, 1000)' : ''}
})`

test('directories not removed by the program are removed when the process exits', async (t) => {
  const base = scratch(t)
  const { stdout } = await run(process.execPath, ['-e', CHILD(base, false)])
  const path = stdout.trim()
  t.true(path.startsWith(base))
  t.false(existsSync(path))
})

test('... and when the process is killed by SIGTERM, which still dies of the signal', async (t) => {
  const base = scratch(t)
  const child = spawn(process.execPath, ['-e', CHILD(base, true)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const path = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())))
  t.true(existsSync(path))
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])))
  child.kill('SIGTERM')
  const [, signal] = await exited
  t.is(signal, 'SIGTERM')
  t.false(existsSync(path))
})

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  test(`... and by ${sig} while the JavaScript thread is busy in a 60 s synchronous loop: the core ends it, dead of the signal, its directory removed`, async (t) => {
    const base = scratch(t)
    const child = spawn(process.execPath, ['-e', CHILD(base, 'busy')], { stdio: ['ignore', 'pipe', 'inherit'] })
    t.teardown(() => child.kill('SIGKILL'))
    const path = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())))
    await new Promise((r) => setTimeout(r, 300))
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])))
    const sent = Date.now()
    child.kill(sig)
    const [, signal] = await exited
    t.is(signal, sig)
    // The loop runs a minute: ending in well under that is the core's doing, not the listener's.
    t.true(Date.now() - sent < 30_000, `ended ${Date.now() - sent} ms after the signal`)
    t.false(existsSync(path))
  })
}

test('a program with a SIGINT listener of its own decides: the core does not end it while its JavaScript thread is busy', async (t) => {
  const base = scratch(t)
  const own = "process.on('SIGINT', () => { console.log('own listener'); process.exit(7) })"
  const child = spawn(process.execPath, ['-e', CHILD(base, 'busy', own)], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  let out = ''
  const path = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())))
  child.stdout.on('data', (d) => (out += d))
  await new Promise((r) => setTimeout(r, 300))
  child.kill('SIGINT')
  // Past the core's grace (1 s): still alive, the program's own listener waits for the loop.
  await new Promise((r) => setTimeout(r, 3_000))
  t.is(child.exitCode, null)
  t.is(child.signalCode, null)
  t.true(existsSync(path))
  child.kill('SIGKILL')
  t.is(out, '')
})
