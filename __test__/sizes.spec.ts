// One size parser for every option and flag (base/units.ts): units as
// written, SI or IEC; a bare number is bytes; errors name the option and
// the value. And `spillway --version`.
import test from 'ava'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, PbsCluster, SetupConfig, SlurmCluster, parseBytes } from 'spillway'

const ROOT = join(__dirname, '..')

const TABLE: [unknown, number | undefined][] = [
  [0, 0],
  [1024, 1024],
  [1536.7, 1536],
  ['1024', 1024],
  ['512B', 512],
  ['10GB', 10e9],
  ['10 GB', 10e9],
  ['10gb', 10e9],
  ['10G', 10e9],
  ['10 GiB', 10 * 2 ** 30],
  ['10gib', 10 * 2 ** 30],
  ['10Gi', 10 * 2 ** 30],
  ['1.5 GiB', 1.5 * 2 ** 30],
  ['.5 MiB', 2 ** 19],
  ['64k', 64_000],
  ['64K', 64_000],
  ['64kB', 64_000],
  ['64KB', 64_000],
  ['64KiB', 65_536],
  ['2 TB', 2e12],
  ['1 TiB', 2 ** 40],
  ['1 PB', 1e15],
  ['1e9', 1e9],
  ['1.5e3 MB', 1.5e9],
  ['  7 MiB  ', 7 * 2 ** 20],
  ['', undefined],
  ['GiB', undefined],
  ['10 GiBs', undefined],
  ['10 gigabytes', undefined],
  ['-1 GiB', undefined],
  ['1,5 GiB', undefined],
  ['10 GiB 2', undefined],
  [-1, undefined],
  [Number.NaN, undefined],
  [Infinity, undefined],
  [null, undefined],
  [true, undefined],
  [{}, undefined],
]

test('parseBytes: the table of sizes as users write them', (t) => {
  for (const [given, bytes] of TABLE) t.is(parseBytes(given), bytes, `parseBytes(${JSON.stringify(given)})`)
})

test('setup options read sizes with the same parser: maxSpill as bytes or a size, the error naming the option and value', (t) => {
  t.is(new SetupConfig({ maxSpill: '10GB' }).maxSpill, '10GB')
  t.notThrows(() => new SetupConfig({ maxSpill: 4096 }))
  const e = t.throws(() => new SetupConfig({ maxSpill: '10 gigs' }), { instanceOf: ConfigError })
  t.like(e!.problems[0], { field: 'maxSpill', value: '10 gigs' })
  t.regex(e!.message, /maxSpill: got "10 gigs"; allowed: .*'10 GiB'/)
})

test("job queues: '32GB' is 32·10⁹ bytes, '32 GiB' 32·2³⁰, as everywhere; a bare number is bytes, and a small one is refused with the way to write GiB", (t) => {
  const si = new SlurmCluster({ cores: 1, memory: '32GB' }).jobScript()
  t.regex(si, /--mem=30518M/, '32·10⁹ bytes is 30518 MiB')
  const iec = new SlurmCluster({ cores: 1, memory: '32 GiB' }).jobScript()
  t.regex(iec, /--mem=32768M/)
  t.regex(new SlurmCluster({ cores: 1, memory: 32 * 2 ** 30 }).jobScript(), /--mem=32768M/)
  t.regex(new SlurmCluster({ cores: 1, memory: '1.5 GiB' }).jobScript(), /--mem=1536M/)
  const old = t.throws(() => new SlurmCluster({ cores: 1, memory: 16 }), { instanceOf: ConfigError })
  t.like(old!.problems[0], { field: 'memory', value: 16 })
  t.regex(old!.message, /a bare number is bytes, so 16 is 16 bytes: for 16 GiB write '16 GiB'/)
  const jobfs = t.throws(() => new PbsCluster({ cores: 1, memory: '4 GiB', jobfs: '100 gigs' }), { instanceOf: ConfigError })
  t.like(jobfs!.problems[0], { field: 'jobfs', value: '100 gigs' })
})

function spillway(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'bin', 'spillway.js'), ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as any).code ?? -1) : 0, stdout, stderr })
    })
  })
}

test('spillway --version and -v print the package version on stdout', async (t) => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  for (const flag of ['--version', '-v']) {
    const r = await spillway([flag])
    t.is(r.code, 0, r.stderr)
    t.is(r.stdout, `${version}\n`)
    t.is(r.stderr, '')
  }
  t.regex((await spillway(['--help'])).stdout, /spillway --version/)
})
