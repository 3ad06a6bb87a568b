// Quiet logs: nothing of spillway's on stdout (a program whose stdout is its
// output stays clean), messages to a `logger` option or to stderr, detail
// with NODE_DEBUG=spillway, and wrapped errors carrying the standard cause.
import test from 'ava'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { Client, ConfigError, SetupConfig, SpillwayError, bag, monitor, setupClient, type Logger } from 'spillway'

const DIST = join(__dirname, '..', 'dist', 'index.js')

/** A program a user would write: set up with the defaults (the dashboard included), compute a bag, close. */
const QUIET = `
const { setupClient, bag } = require(${JSON.stringify(DIST)})
;(async () => {
  const { client, cluster } = await setupClient({ maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1 })
  const total = await client.compute(bag.fromSequence([1, 2, 3, 4], { npartitions: 2 }).map((x) => x * 2).sum(), { progress: true })
  if (total !== 20) throw new Error('wrong total ' + total)
  await client.close()
  await cluster.close()
})().catch((e) => { console.error(e); process.exit(1) })
`

function run(env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', QUIET], { env: { ...process.env, ...env }, timeout: 90_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr })))
  })
}

test('a program that sets up, computes a bag and closes writes nothing on stdout; the summary and dashboard line go to stderr', async (t) => {
  const { stdout, stderr } = await run({ NODE_DEBUG: '' })
  t.is(stdout, '')
  t.regex(stderr, /^\[spillway\] Configuration summary$/m)
  t.regex(stderr, /^\[spillway\] Dashboard: http:\/\/127\.0\.0\.1:\d+\//m)
  t.false(/SPILLWAY \d+:/.test(stderr), 'no debug detail unless NODE_DEBUG asks')
})

test('NODE_DEBUG=spillway adds detail on stderr through util.debuglog, still nothing on stdout', async (t) => {
  const { stdout, stderr } = await run({ NODE_DEBUG: 'spillway' })
  t.is(stdout, '')
  t.regex(stderr, /SPILLWAY \d+: resources \{/)
  t.regex(stderr, /SPILLWAY \d+: worker \S+ \(worker-0\) added: \d+ thread\(s\), \d+\.\d\d GiB limit/)
})

function collector() {
  const lines: Record<keyof Logger, string[]> = { info: [], warn: [], error: [], debug: [] }
  const logger: Logger = {
    info: (m) => lines.info.push(m),
    warn: (m) => lines.warn.push(m),
    error: (m) => lines.error.push(m),
    debug: (m) => lines.debug.push(m),
  }
  return { lines, logger }
}

test('a logger option (console’s or pino’s shape) receives the summary, the dashboard line, debug detail and monitor’s lines', async (t) => {
  const { lines, logger } = collector()
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, logger })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  t.true(lines.info.some((l) => l.startsWith('[spillway] Configuration summary')), lines.info.join('\n'))
  t.true(lines.info.some((l) => /^Dashboard: http:/.test(l)))
  t.true(lines.debug.some((l) => l.startsWith('resources %j')))
  // client.logger is the given logger behind a guard against its own failures: what it is told reaches the given one.
  client.logger.warn('told through client.logger')
  t.true(lines.warn.includes('told through client.logger'))
  const m = await monitor(client, () => client.compute(bag.fromSequence([1, 2, 3]).sum()), { description: 'a small sum', intervalMs: 50 })
  t.is(m.value, 6)
  t.true(lines.info.includes('\n📊 Monitoring: a small sum'))
  t.regex(lines.info[lines.info.length - 1], /^ {3}Time: \d+\.\ds \| peak memory/)
  // A Client made by hand takes its own logger, checked as setupClient's.
  const own = collector()
  await monitor(new Client(cluster, { logger: own.logger }), () => 1, { description: 'own client', intervalMs: 50 })
  t.true(own.lines.info.includes('\n📊 Monitoring: own client'))
  t.throws(() => new Client(cluster, { logger: { info() {} } as never }), { instanceOf: ConfigError, message: /logger: got .*missing: warn, error, debug/ })
})

test('silenceLogs drops info, warn and error even with a logger; a logger without the four methods is a ConfigError naming logger', async (t) => {
  const { lines, logger } = collector()
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 0.5, dashboard: false, silenceLogs: true, logger })
  await client.close()
  await cluster.close()
  t.deepEqual(lines.info, [])
  t.true(lines.debug.length > 0, 'debug detail still reaches the logger')
  const e = await t.throwsAsync(() => setupClient({ logger: { info() {}, warn() {} } as never }), { instanceOf: ConfigError })
  t.is(e!.problems[0].field, 'logger')
  t.regex(e!.message, /info, warn, error and debug methods .*missing: error, debug/)
})

test('a logger whose methods throw (or reject) fails nothing: setupClient, a compute and close go on, and stderr says so once', async (t) => {
  let calls = 0
  const boom = () => {
    calls++
    throw new Error('the log service is down')
  }
  const logger = { info: boom, warn: boom, error: boom, debug: async () => Promise.reject(new Error('async down')) }
  const written: string[] = []
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    written.push(String(chunk))
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest)
  }) as typeof process.stderr.write
  t.teardown(() => {
    process.stderr.write = write
  })
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 0.5, dashboard: false, logger })
  t.is(await client.compute(bag.fromSequence([1, 2, 3]).sum()), 6)
  await client.close()
  await cluster.close()
  t.true(calls > 0, 'the logger was called')
  const reports = written.filter((w) => w.includes("spillway ignores its logger's failures"))
  t.is(reports.length, 1, written.join(''))
  t.regex(reports[0], /logger\.(info|warn|error|debug) threw \((the log service is down|async down)\)/)
})

test('errors that wrap another carry it as the standard cause', async (t) => {
  const e = t.throws(() => SetupConfig.fromFile('/nonexistent/spillway-profile.yaml'), { instanceOf: ConfigError })
  t.is((e!.cause as NodeJS.ErrnoException).code, 'ENOENT')
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 1, maxMemGb: 2, reserveMemGb: 0.5, dashboard: false, silenceLogs: true })
  t.teardown(async () => {
    await client.close()
    await cluster.close()
  })
  const boom = await t.throwsAsync(
    () =>
      client
        .submit(() => {
          throw new TypeError('no such row')
        })
        .result(),
    { instanceOf: SpillwayError, code: 'ERR_SPILLWAY_TASK' },
  )
  t.true(boom!.cause instanceof Error)
  t.is((boom!.cause as Error).name, 'TypeError')
  t.is((boom!.cause as Error).message, 'no such row')
  t.regex((boom!.cause as Error).stack ?? '', /no such row/)
})

test('no code of the library writes to stdout: only the CLI commands, whose output is their purpose', (t) => {
  const src = join(__dirname, '..', 'src')
  const found: string[] = []
  for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
    const file = join(e.parentPath, e.name)
    if (!e.isFile() || !file.endsWith('.ts') || relative(src, file).startsWith('cli/')) continue
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/console\.(log|info|table|dir)\(|process\.stdout\.write/.test(line)) found.push(`${relative(src, file)}:${i + 1}: ${line.trim()}`)
      })
  }
  t.deepEqual(found, [])
})
