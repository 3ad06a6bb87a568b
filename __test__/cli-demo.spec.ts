import test from 'ava'
import { execFile } from 'node:child_process'
import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { availableCodecs } from 'spillway'
import { scratch } from './helpers'

const BIN = join(__dirname, '..', 'bin', 'spillway.js')

/** A user's shell without a batch system, running `spillway ...`. */
function spillway(args: string[], timeout = 150_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^(PBS_|SLURM_|NCPUS$)/.test(k)) env[k] = v
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout, maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

const SECTIONS = [
  'SYSTEM MEMORY ANALYSIS',
  'MEMORY PRESSURE TEST',
  'CLUSTER REPORT',
  'MEMORY TIMELINE',
  'COMPRESSION COMPARISON',
  'CONSERVATIVE CONFIG',
  'TUNING THE THRESHOLDS',
]

test('spillway demo --size small --json: every figure, spill under pressure, the mean, every codec, the chart', async (t) => {
  const out = scratch(t, 'spillway-demo-test-')
  // A symlink planted at the output name must be replaced, never written through.
  const victim = join(scratch(t, 'spillway-demo-victim-'), 'victim')
  writeFileSync(victim, 'untouched\n')
  symlinkSync(victim, join(out, 'demo.json'))
  const { code, stdout, stderr } = await spillway(['demo', '--size', 'small', '--out', out, '--json'])
  t.is(code, 0, stderr)
  t.is(readFileSync(victim, 'utf8'), 'untouched\n')
  for (const f of ['demo.json', 'memory-timeline.svg']) {
    const st = lstatSync(join(out, f))
    t.true(st.isFile(), `${f} is a regular file`)
    t.is(st.mode & 0o777, 0o600, `${f} mode`)
  }
  // --json prints the figures and nothing else.
  const d = JSON.parse(stdout)
  t.deepEqual(JSON.parse(readFileSync(join(out, 'demo.json'), 'utf8')), d, 'demo.json holds the same figures')
  t.is(d.size, 'small')

  t.true(d.system.totalMemoryBytes > 0)
  t.true(d.system.cores >= 1)

  const p = d.pressure
  t.deepEqual(p.config, { workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false })
  t.is(p.workers, 2)
  t.is(p.memoryLimitBytes, 2 ** 30)
  t.true(p.arrayOverWorkerMemory > 1.1 && p.arrayOverWorkerMemory < 1.6, `array / worker memory ${p.arrayOverWorkerMemory}`)
  t.true(p.peakSpillGib > 0, 'the pressure test spilled')
  t.true(p.report.totalSpillGib > 0)
  t.true(Math.abs(p.mean - 0.5) < 0.01, `mean ${p.mean}`)
  t.regex(p.summaryLine, /^Time: \d+\.\ds \| peak memory \d+\.\d\d GiB \| peak spill \d+\.\d\d GiB$/)
  t.regex(p.report.summaryLine, /^workers=2 \| mem=\d+\.\d\d GiB\/max \| spill=\d+\.\d\d GiB$/)
  t.true(p.timeline.length >= 2)
  t.false(existsSync(p.spillDir), 'the spill directory is removed with its cluster')

  const c = d.compression
  t.deepEqual(c.available, availableCodecs())
  const compared = c.results.map((r: any) => r.codec).sort()
  t.deepEqual(compared, ['auto', ...availableCodecs()].sort(), 'auto and every available codec')
  const secs = c.results.map((r: any) => r.seconds)
  t.deepEqual(secs, [...secs].sort((a: number, b: number) => a - b), 'sorted by time')
  const sums = new Set(c.results.map((r: any) => r.sum))
  t.is(sums.size, 1, 'every codec gives the same sum')
  const expected = c.shape[0] * c.shape[1] * 4.5
  t.true(Math.abs([...sums][0] as number - expected) / expected < 0.01)
  for (const r of c.results) t.true(r.spillGib > 0, `${r.codec} spilled`)
  const none = c.results.find((r: any) => r.codec === 'none')
  if (none) {
    for (const r of c.results) if (r.codec !== 'none') t.true(r.spillGib < none.spillGib, `${r.codec} puts fewer bytes on disk than none`)
  }

  t.deepEqual(d.conservative, { reserveMemGb: 4, memoryTarget: 0.6, memorySpill: 0.7, memoryPause: 0.85, memoryTerminate: 0.95, spillCompression: 'auto' })
  t.is(d.tuning.action, 'loosen', 'heavy spill loosens the thresholds')
  t.regex(d.tuning.summary, /^Memory thresholds adjusted on 2 worker\(s\): target 75%→80%, spill 85%→90% \(high spill/)

  t.is(d.chartPath, join(out, 'memory-timeline.svg'))
  const svg = readFileSync(d.chartPath, 'utf8')
  t.regex(svg, /^<\?xml version="1\.0"[^>]*\?>\s*<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[\s\S]*<\/svg>\s*$/)
  for (const series of ['memory', 'spill']) {
    const m = new RegExp(`<polyline[^>]*data-series="${series}"[^>]*points="([^"]+)"`).exec(svg)
    t.truthy(m, `${series} series`)
    t.is(m![1].trim().split(/\s+/).length, p.timeline.length, `${series}: one point per sample`)
  }
  t.is(svg.split('<svg').length, 2)
  t.is((svg.match(/</g) ?? []).length, (svg.match(/>/g) ?? []).length, 'balanced tags')
})

test('spillway demo prints the recipe’s sections in order', async (t) => {
  // A --out directory the demo has to create is private to the user.
  const out = join(scratch(t, 'spillway-demo-test-'), 'made', 'here')
  const { code, stdout, stderr } = await spillway(['demo', '--size', 'small', '--codecs', 'auto', '--out', out])
  t.is(code, 0, stderr)
  t.is(statSync(out).mode & 0o777, 0o700)
  t.is(statSync(join(out, '..')).mode & 0o777, 0o700)
  let at = -1
  for (const s of SECTIONS) {
    const i = stdout.indexOf(s)
    t.true(i > at, `${s} after the previous section`)
    at = i
  }
  t.true(stdout.includes('[spillway] Configuration summary'))
  t.true(stdout.includes('Workers: 2 | threads/worker: 1 | processes: True'))
  t.regex(stdout, /✅ 2 workers, 1\.00 GiB limit each/)
  t.regex(stdout, /📊 Monitoring: Persist .*\n\s+Time: \d+\.\ds \| peak memory \d\.\d\d GiB \| peak spill \d\.\d\d GiB/)
  t.regex(stdout, /✅ Result: 0\.49\d{4}|✅ Result: 0\.50\d{4}/)
  t.regex(stdout, /workers=2 \| mem=\d\.\d\d GiB\/max \| spill=\d\.\d\d GiB\nSpilled to disk: \d\.\d\d GiB/)
  t.true(stdout.includes(`${join(out, 'memory-timeline.svg')}`))
  t.regex(stdout, /codec {5}time \(s\) {3}spilled to disk \(GiB\)\n-{42}\nauto +\d+\.\d +\d\.\d\d\n/)
  t.regex(stdout, /reserveMemGb {7}4\nmemoryTarget {7}0\.6\nmemorySpill {8}0\.7\nmemoryPause {8}0\.85\nmemoryTerminate {4}0\.95\nspillCompression {3}auto/)
  t.regex(stdout, /Memory thresholds adjusted on 2 worker\(s\): target 75%→80%, spill 85%→90%/)
  t.true(existsSync(join(out, 'memory-timeline.svg')))
  t.true(existsSync(join(out, 'demo.json')))
  t.false(/\x1b\[/.test(stdout), 'no progress bar escapes when stdout is not a terminal')
})

test('spillway demo rejects an unknown size or codec before starting anything', async (t) => {
  const size = await spillway(['demo', '--size', 'huge'], 30_000)
  t.is(size.code, 2)
  t.regex(size.stderr, /--size expects small, medium, full, got "huge"/)
  const codec = await spillway(['demo', '--codecs', 'lz4,brotli'], 30_000)
  t.is(codec.code, 2)
  t.regex(codec.stderr, /--codecs: unknown 'brotli'; valid here: auto, lz4/)
})
