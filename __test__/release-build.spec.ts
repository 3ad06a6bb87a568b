import test from 'ava'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
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
  // The zig toolchain comes from PyPI on first use (then cached outside the repo); the build links the objects `npm install`'s build kept, in about a second (a full relink with LTO, two minutes, when they are not current).
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

test('the packed main package and linux-x64-gnu package install with no Rust and npm offline, and spillway imports, requires and runs its demo', (t) => {
  if (!linuxX64) return t.pass('only built and checked on linux x64')
  t.timeout(15 * 60_000)
  buildRelease()
  const out = mkdtempSync(join(tmpdir(), 'spillway-release-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  const tarballs = execFileSync(process.execPath, [join(ROOT, 'scripts', 'pack-release.js'), '--out', join(out, 'packages')], { encoding: 'utf8' }).trim().split('\n')
  t.is(tarballs.length, 2)
  const [main, platform] = tarballs
  const files = execFileSync('tar', ['tzf', main], { encoding: 'utf8' }).split('\n')
  t.false(files.some((f) => f.endsWith('.node')), 'the main package holds no binary')
  const manifest = JSON.parse(execFileSync('tar', ['xzf', main, '-O', 'package/package.json'], { encoding: 'utf8' }))
  t.is(manifest.scripts, undefined, 'no install script')
  t.is(manifest.optionalDependencies['spillway-linux-x64-gnu'], manifest.version)
  t.deepEqual(Object.keys(manifest.optionalDependencies).sort(), ['spillway-darwin-arm64', 'spillway-darwin-x64', 'spillway-linux-arm64-gnu', 'spillway-linux-x64-gnu', 'spillway-linux-x64-musl'])
  // napi artifacts put the binary in its package; napi pre-publish checked the package against the main one.
  const platformManifest = JSON.parse(execFileSync('tar', ['xzf', platform, '-O', 'package/package.json'], { encoding: 'utf8' }))
  t.like(platformManifest, { name: 'spillway-linux-x64-gnu', version: manifest.version, os: ['linux'], cpu: ['x64'], libc: ['glibc'] })
  t.true(execFileSync('tar', ['tzf', platform], { encoding: 'utf8' }).includes('package/spillway.linux-x64-gnu.node'))

  // npm's cache holds the runtime dependencies (fetched once, online) and nothing else.
  const cache = join(out, 'npm-cache')
  const npm = (cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env) => execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const deps = Object.entries(manifest.dependencies as Record<string, string>).map(([n, v]) => `${n}@${v}`)
  const scratch = join(out, 'scratch')
  mkdirSync(scratch)
  writeFileSync(join(scratch, 'package.json'), '{"name":"scratch","private":true}')
  npm(scratch, ['install', '--cache', cache, '--no-audit', '--no-fund', ...deps])

  // No cargo or rustc anywhere on PATH, and npm offline.
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((d) => d && !['cargo', 'rustc'].some((b) => existsSync(join(d, b))))
    .join(':')
  const env = { ...process.env, PATH: path, npm_config_offline: 'true', npm_config_cache: cache }
  t.throws(() => execFileSync('cargo', ['--version'], { env, stdio: 'ignore' }))
  const app = join(out, 'app')
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), '{"name":"app","private":true}')
  npm(app, ['install', '--no-audit', '--no-fund', main, platform], env)
  const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: app, env, encoding: 'utf8' })
  t.is(node(['-e', "const s = require('spillway'); console.log(typeof s.setupClient, s.availableCodecs().includes('lz4'))"]).trim(), 'function true')
  t.is(node(['--input-type=module', '-e', "import { setupClient, random } from 'spillway'; console.log(typeof setupClient, typeof random.random)"]).trim(), 'function function')
  const loaded = node(['-e', "require('spillway'); console.log(Object.keys(require.cache).filter((k) => k.endsWith('.node')).join())"]).trim()
  t.regex(loaded, /node_modules\/spillway-linux-x64-gnu\/spillway\.linux-x64-gnu\.node$/)
  const demo = JSON.parse(execFileSync('npx', ['spillway', 'demo', '--size', 'small', '--json'], { cwd: app, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
  t.is(demo.size, 'small')
  t.true(demo.system.totalMemoryBytes > 0)
  rmSync(demo.outDir, { recursive: true, force: true })
})
