import test from 'ava'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(__dirname, '..')
const linuxX64 = process.platform === 'linux' && process.arch === 'x64'

/** The floor check's verdict on an addon. */
function floor(file: string) {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'check-glibc-floor.js'), file, '--json'], { encoding: 'utf8' })
  return { status: r.status, report: JSON.parse(r.stdout) }
}

let built: string | undefined
function buildRelease(): string {
  // The zig toolchain comes from PyPI on first use (then cached outside the repo); the build itself takes about a minute here.
  built ??= join(ROOT, execFileSync('bash', [join(ROOT, 'scripts', 'build-linux-x64-gnu.sh')], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim())
  return built
}

test('the linux-x64-gnu package’s addon needs at most GLIBC_2.17 and links only glibc and libgcc_s; the host build is over the floor', (t) => {
  if (!linuxX64) return t.pass('only built and checked on linux x64')
  t.timeout(15 * 60_000)
  const addon = buildRelease()
  t.true(existsSync(addon))
  const ok = floor(addon)
  t.is(ok.status, 0, JSON.stringify(ok.report))
  t.is(ok.report.highest, '2.17')
  t.true(ok.report.needed.includes('libc.so.6'))
  // The negative control: the addon `npm install` builds on this machine needs its newer glibc.
  const host = floor(join(ROOT, 'spillway.linux-x64-gnu.node'))
  t.is(host.status, 1)
  t.regex(host.report.problems.join(' '), /above the floor GLIBC_2\.17/)
})

test('the glibc-2.17 addon loads through the package and round-trips data through every codec, a spilling SpillBuffer and a cluster', (t) => {
  if (!linuxX64) return t.pass('only built and checked on linux x64')
  t.timeout(15 * 60_000)
  const addon = buildRelease()
  const script = `
    const { availableCodecs, compress, decompress, SpillBuffer, setupClient, random } = require(${JSON.stringify(ROOT)})
    const { mkdtempSync, rmSync } = require('node:fs')
    const { join } = require('node:path')
    ;(async () => {
      const loaded = Object.keys(require.cache).filter((k) => k.endsWith('.node'))
      const data = Buffer.alloc(1 << 20, 7)
      const codecs = availableCodecs()
      for (const c of codecs) if (!(await decompress(await compress(data, c))).equals(data)) throw new Error('codec ' + c)
      const dir = mkdtempSync(join(require('node:os').tmpdir(), 'spillway-rel-'))
      const sb = new SpillBuffer({ dir: join(dir, 's'), memoryLimit: 1 << 20 })
      for (let i = 0; i < 8; i++) await sb.set('k' + i, Buffer.alloc(256 << 10, i))
      let same = true
      for (let i = 0; i < 8; i++) same &&= (await sb.get('k' + i)).equals(Buffer.alloc(256 << 10, i))
      const spilled = sb.metrics().spillCount
      await sb.close()
      rmSync(dir, { recursive: true, force: true })
      const { client, cluster } = await setupClient({ maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, workloadType: 'cpu', silenceLogs: true })
      const sum = await client.compute(random.randint(0, 10, [4000, 4000], { chunks: 1000, seed: 5 }).sum())
      const three = await client.submit((a, b) => a + b, [1, 2]).result()
      await client.close(); await cluster.close()
      console.log(JSON.stringify({ loaded, codecs, same, spilled, sum, three }))
    })().catch((e) => { console.error(e); process.exit(1) })`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: addon } })
  t.is(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!)
  t.deepEqual(out.loaded, [addon])
  t.true(out.codecs.includes('lz4') && out.codecs.includes('zstd'))
  t.true(out.same)
  t.true(out.spilled > 0)
  t.is(out.three, 3)
  t.true(out.sum > 0)
})

test('on a real glibc 2.17 (Node 16 under CentOS 7’s loader and libraries) the release addon loads and round-trips data; the host build does not load', (t) => {
  if (!linuxX64) return t.pass('only built and checked on linux x64')
  t.timeout(15 * 60_000)
  const addon = buildRelease()
  const run = (file: string) => spawnSync('bash', [join(ROOT, 'scripts', 'run-on-glibc217.sh'), file], { encoding: 'utf8' })
  const ok = run(addon)
  t.is(ok.status, 0, ok.stderr)
  const out = JSON.parse(ok.stdout.trim().split('\n').pop()!)
  t.is(out.node, 'v16.20.2')
  t.deepEqual([...out.codecs].sort(), ['lz4', 'none', 'snappy', 'zlib', 'zstd'])
  t.true(out.spillCount > 0)
  const host = run(join(ROOT, 'spillway.linux-x64-gnu.node'))
  t.not(host.status, 0, 'the addon built against this machine’s glibc must not load on 2.17')
})
