#!/usr/bin/env node
// bench/bag: bags over files, against Dask bag, DuckDB, a single Node
// process and the machine's floor, on the same files in one run, as ratios.
//
//   (a) text    readText + filter(line includes 'ERROR') + count over many
//               small log files and a few large ones: spillway (2 workers)
//               vs Dask bag (2-worker LocalCluster) vs one Node process
//               (readFileSync + split + filter + count, file by file)
//   (b) floor   the same bytes read from the page cache and split into lines
//               by the fastest code at hand, one process per core (2, each
//               half the bytes): C (read + memchr) and Node (readSync +
//               Buffer#indexOf); against spillway with a trivial filter
//   (c) ndjson  readText(file).map(JSON.parse).foldBy(user, sum of bytes)
//               vs Dask bag (read_text.map(json.loads).foldby) vs DuckDB
//               (read_json + GROUP BY, threads=2, memory_limit='2GiB')
//   (d) files   many small source files (50 000 generated, sizes drawn from
//               the Linux sources' distribution, 22 kB on average; or a real
//               tree with --corpus): readText(glob).map(/\bstatic\b/.test)
//               .frequencies(), two counts in one pass, vs Dask bag
//               (read_text(list, files_per_partition).map(...).frequencies())
//               vs one Node process (readFileSync + split + regex, file by
//               file) vs the floor (C and Node, 2 processes, lines only)
//
// Every side runs in a fresh process (and cluster) per repetition, sides in
// alternating order; input files are generated once into a cache directory
// under the OS temp dir (bench/bag/gen.js). The first pass over them (not
// timed) brings them into the page cache.
//
//   npm run bench:bag                (node bench/bag/run.js [flags])
//     --reps N      repetitions (default 5; 3 with --quick)
//     --quick       ~300 MB of text and 100 MB of NDJSON instead of ~3.3 GB and 512 MiB
//     --only a,b    text, ndjson, files
//     --corpus DIR  the files case over every .c and .h file under DIR ('kernel':
//                   the Linux sources of apt's linux-source, extracted once under
//                   the OS temp dir); its answer is the single process's, taken
//                   in an untimed first pass that also warms the page cache
//     --blocksize B partition size for every side (default 64MiB)
//     --json        print the figures as JSON
//     --verbose     show the sides' stderr
'use strict'

const { spawnSync, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PY, pythonEnv } = require('../dask/sides')
const { busyShare, LOADED } = require('../load')
const { ensureData, ensureSmallFiles, corpusFiles } = require('./gen')

const ROOT = path.resolve(__dirname, '..', '..')
const { argv, flag, value } = require('../args')
const QUICK = flag('--quick')
const JSON_OUT = flag('--json')
const VERBOSE = flag('--verbose')
const REPS = Number(value('--reps') ?? (QUICK ? 3 : 5))
const CASES = ['text', 'ndjson', 'files']
const ONLY = value('--only')?.split(',').filter((n) => CASES.includes(n))
const CORPUS = value('--corpus')
const BLOCKSIZE = value('--blocksize') ?? '64MiB'
const log = JSON_OUT ? (...a) => console.error(...a) : (...a) => console.log(...a)

// ---- environment ------------------------------------------------------------

const PY_MODULES = ['dask', 'dask.bag', 'distributed', 'duckdb', 'toolz', 'fsspec']
const PY_PACKAGES = ['dask[bag]', 'distributed', 'duckdb']

function venvReady() {
  if (!fs.existsSync(PY)) return false
  return spawnSync(PY, ['-c', `import ${PY_MODULES.join(', ')}`], { env: pythonEnv(), stdio: 'ignore' }).status === 0
}

function ensureVenv() {
  if (venvReady()) return
  log(`Setting up bench/.venv with ${PY_PACKAGES.join(', ')} …`)
  const env = { ...pythonEnv(), BENCH_EXTRA_PACKAGES: PY_PACKAGES.join(' ') }
  try {
    execFileSync('bash', [path.join(ROOT, 'bench', 'setup-venv.sh')], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  } catch {}
  if (!venvReady()) execFileSync(path.join(ROOT, 'bench', '.venv', 'bin', 'pip'), ['install', '--quiet', ...PY_PACKAGES], { env, stdio: 'inherit' })
  if (!venvReady()) throw new Error(`bench/.venv cannot import ${PY_MODULES.join(', ')}`)
}

function sh(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', env: pythonEnv(), stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

function machine() {
  const model = (sh('lscpu', []) || '').split('\n').find((l) => /^Model name/.test(l))
  const v = (sh(PY, ['-c', 'import sys, dask, distributed, duckdb; print(sys.version.split()[0], dask.__version__, distributed.__version__, duckdb.__version__)']) || '').split(' ')
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpu: model ? model.replace(/^Model name:\s*/, '') : os.cpus()[0]?.model,
    memTotalGib: os.totalmem() / 2 ** 30,
    node: process.version,
    python: v[0],
    dask: v[1],
    distributed: v[2],
    duckdb: v[3],
    gcc: (sh('gcc', ['--version']) || '').split('\n')[0] || undefined,
    spillway: require(path.join(ROOT, 'package.json')).version,
  }
}

/** The C floor, compiled into the data's cache directory; undefined without a C compiler. */
function floorBinary(dir) {
  const bin = path.join(dir, 'floor-c')
  const src = path.join(__dirname, 'floor.c')
  if (fs.existsSync(bin) && fs.statSync(bin).mtimeMs >= fs.statSync(src).mtimeMs) return bin
  try {
    execFileSync('gcc', ['-O2', '-march=native', '-o', bin, src], { stdio: ['ignore', 'ignore', 'inherit'] })
    return bin
  } catch {
    log('  no C compiler: the floor is Node only')
    return undefined
  }
}

/** Where the C floor is compiled when no generated data directory is in use. */
function binDir() {
  const d = path.join(os.tmpdir(), 'spillway-bench-bag-bin')
  fs.mkdirSync(d, { recursive: true })
  return d
}

/** Two lists of files with about half the bytes each (largest first, to the lighter list). */
function floorLists(dir, listPath = path.join(dir, 'files.json'), name = 'floor') {
  const files = JSON.parse(fs.readFileSync(listPath, 'utf8')).sort((a, b) => b.bytes - a.bytes)
  const lists = [[], []]
  const bytes = [0, 0]
  for (const f of files) {
    const k = bytes[0] <= bytes[1] ? 0 : 1
    lists[k].push(f.path)
    bytes[k] += f.bytes
  }
  return lists.map((l, k) => {
    const p = path.join(os.tmpdir(), `spillway-bench-bag-${name}-${k}.txt`)
    fs.writeFileSync(p, l.join('\n') + '\n')
    return p
  })
}

// ---- sides ----------------------------------------------------------------------

function lastJson(r) {
  const last = (r.stdout || '').trim().split('\n').pop()
  if (r.status !== 0 || !last) {
    const why = r.error ? r.error.message : `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}`
    return { error: `${why}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}` }
  }
  try {
    return JSON.parse(last)
  } catch {
    return { error: `no JSON line: ${last.slice(0, 200)}` }
  }
}

function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', timeout: 20 * 60_000, maxBuffer: 64 << 20 })
  if (VERBOSE && r.stderr) process.stderr.write(r.stderr)
  return r
}

/** Two floor processes at once, one per core; the floor is the slower one's time. */
function runFloor(cmd, argsOf, lists) {
  const { spawn } = require('node:child_process')
  return new Promise((resolve) => {
    const outs = []
    let left = lists.length
    for (const l of lists) {
      const child = spawn(cmd, argsOf(l), { stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('close', (status) => {
        outs.push(lastJson({ status, stdout, stderr }))
        if (--left === 0) {
          const bad = outs.find((o) => o.error)
          if (bad) return resolve(bad)
          // One thread each, reading from the page cache: their CPU time is about their wall time.
          resolve({ seconds: Math.max(...outs.map((o) => o.seconds)), cpuSeconds: outs.reduce((a, o) => a + o.seconds, 0), answer: outs.reduce((a, o) => a + o.lines, 0), perProcess: outs.map((o) => o.seconds) })
        }
      })
    }
  })
}

function sidesFor(c, m, ctx) {
  if (c === 'files') {
    const f = ctx.files
    const expect = f.answer
    return [
      { name: 'spillway', run: () => lastJson(run(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--case', 'files', '--glob', f.glob, '--blocksize', BLOCKSIZE])), expect },
      { name: 'dask', run: () => lastJson(run(PY, [path.join(__dirname, 'py_side.py'), '--side', 'dask', '--case', 'files', '--list', f.list, '--blocksize', BLOCKSIZE], pythonEnv())), expect },
      { name: 'single', run: () => lastJson(run(process.execPath, [path.join(__dirname, 'single.js'), '--case', 'files', '--glob', f.glob])), expect },
      { name: 'floor-node', run: () => runFloor(process.execPath, (l) => [path.join(__dirname, 'floor.js'), l], f.lists), expect: expect.lines },
      ...(ctx.floorBin ? [{ name: 'floor-c', run: () => runFloor(ctx.floorBin, (l) => [l], f.lists), expect: expect.lines }] : []),
    ]
  }
  const manifest = path.join(m.dir, 'manifest.json')
  const spill = (cs) => () => lastJson(run(process.execPath, [path.join(__dirname, 'spillway_side.js'), '--case', cs, '--manifest', manifest, '--blocksize', BLOCKSIZE]))
  const py = (side, cs) => () => lastJson(run(PY, [path.join(__dirname, 'py_side.py'), '--side', side, '--case', cs, '--manifest', manifest, '--blocksize', BLOCKSIZE], pythonEnv()))
  if (c === 'text') {
    const sides = [
      { name: 'spillway', run: spill('text'), expect: m.text.errors },
      { name: 'dask', run: py('dask', 'text'), expect: m.text.errors },
      { name: 'single', run: () => lastJson(run(process.execPath, [path.join(__dirname, 'single.js'), '--manifest', manifest])), expect: m.text.errors },
      { name: 'spillway-trivial', run: spill('trivial'), expect: m.text.lines },
      { name: 'floor-node', run: () => runFloor(process.execPath, (l) => [path.join(__dirname, 'floor.js'), l], ctx.lists), expect: m.text.lines },
    ]
    if (ctx.floorBin) sides.push({ name: 'floor-c', run: () => runFloor(ctx.floorBin, (l) => [l], ctx.lists), expect: m.text.lines })
    return sides
  }
  const expect = { users: m.ndjson.users, total: m.ndjson.totalBytesField }
  return [
    { name: 'spillway', run: spill('ndjson'), expect },
    { name: 'dask', run: py('dask', 'ndjson'), expect },
    { name: 'duckdb', run: py('duckdb', 'ndjson'), expect },
  ]
}

// ---- figures --------------------------------------------------------------------

function stats(xs) {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  if (!s.length) return undefined
  const k = s.length >> 1
  return { min: s[0], median: s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2, max: s[s.length - 1], n: s.length }
}

const RATIOS = {
  text: [
    { label: 'spillway / Dask bag', num: 'spillway', den: 'dask', target: 0.25 },
    { label: 'spillway / single Node process', num: 'spillway', den: 'single', target: 0.6 },
    { label: 'spillway (trivial filter) / floor (C, 2 processes)', num: 'spillway-trivial', den: 'floor-c', target: 1.5 },
    { label: 'spillway (trivial filter) / floor (Node, 2 processes)', num: 'spillway-trivial', den: 'floor-node' },
  ],
  ndjson: [
    { label: 'spillway / Dask bag', num: 'spillway', den: 'dask' },
    { label: 'spillway / DuckDB', num: 'spillway', den: 'duckdb' },
  ],
  files: [
    { label: 'spillway / single Node process', num: 'spillway', den: 'single', target: 0.5 },
    { label: 'spillway / Dask bag', num: 'spillway', den: 'dask', target: 0.25 },
    { label: 'spillway / floor (C, 2 processes, lines only)', num: 'spillway', den: 'floor-c' },
    { label: 'spillway / floor (Node, 2 processes, lines only)', num: 'spillway', den: 'floor-node' },
  ],
}

const f2 = (x) => (x === undefined ? '—' : x.toFixed(2))
const f3 = (x) => (x === undefined ? '—' : x.toFixed(3))

function table(head, body) {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => String(b[i]).length)))
  const line = (cells) => '| ' + cells.map((c, i) => String(c).padEnd(w[i])).join(' | ') + ' |'
  return [line(head), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...body.map(line)].join('\n')
}

/** The files case's corpus (generated, or --corpus), its floor lists and its answer. */
function smallFilesCase(log) {
  let f
  if (CORPUS) {
    const c = corpusFiles(CORPUS, log)
    // The single process's answer, in a first pass that also brings the files into the page cache.
    const first = lastJson(run(process.execPath, [path.join(__dirname, 'single.js'), '--case', 'files', '--glob', c.files.glob]))
    if (first.error) throw new Error(`the first pass over ${c.dir} failed: ${first.error}`)
    f = { ...c.files, corpus: c.dir, answer: first.answer, answerFrom: 'single process, untimed first pass' }
  } else {
    const g = ensureSmallFiles(QUICK ? 'quick' : 'default', log)
    f = { ...g.files, corpus: 'generated', answer: { lines: g.files.lines, matches: g.files.matches }, answerFrom: 'counted while generating' }
  }
  f.lists = floorLists(path.dirname(f.list), f.list, 'files')
  log(`bench/bag: files case over ${f.files} files, ${(f.bytes / 2 ** 20).toFixed(0)} MiB (${f.corpus}); answer ${JSON.stringify(f.answer)} (${f.answerFrom})`)
  return f
}

// ---- main -----------------------------------------------------------------------

async function main() {
  ensureVenv()
  const cases = CASES.filter((c) => !ONLY?.length || ONLY.includes(c))
  const generated = cases.includes('text') || cases.includes('ndjson')
  const m = generated ? ensureData(QUICK ? 'quick' : 'default', log) : undefined
  const ctx = { lists: m && floorLists(m.dir), floorBin: floorBinary(m?.dir ?? binDir()) }
  const mach = machine()
  if (generated) {
    // Into the page cache (not timed): every side reads the files warm.
    const warm = await runFloor(ctx.floorBin ?? process.execPath, (l) => (ctx.floorBin ? [l] : [path.join(__dirname, 'floor.js'), l]), ctx.lists)
    spawnSync('cat', [m.ndjson.path], { stdio: ['ignore', 'ignore', 'ignore'] })
    log(`bench/bag: text ${m.text.files} files, ${(m.text.bytes / 2 ** 30).toFixed(2)} GiB (${m.text.smallFiles} small, ${m.text.largeFiles} large), NDJSON ${(m.ndjson.bytes / 2 ** 30).toFixed(2)} GiB; page cache warmed in ${f2(warm.seconds)} s`)
  }
  if (cases.includes('files')) ctx.files = smallFilesCase(log)
  log(`bench/bag: ${cases.join(' + ')}, ${REPS} reps; blocksize ${BLOCKSIZE}`)
  const started = Date.now()
  const runs = {}
  for (let rep = 0; rep < REPS; rep++) {
    for (const c of cases) {
      const sides = sidesFor(c, m, ctx)
      // Alternate the order, so drift in the machine falls on every side.
      const order = rep % 2 ? [...sides].reverse() : sides
      for (const s of order) {
        const busy = busyShare()
        const r = await s.run()
        const ok = !r.error && JSON.stringify(r.answer) === JSON.stringify(s.expect)
        const rec = { case: c, side: s.name, rep, busyBefore: busy, loaded: busy > LOADED, ok, ...r }
        ;(runs[`${c}/${s.name}`] ??= []).push(rec)
        log(`  rep ${rep + 1}/${REPS} ${c.padEnd(6)} ${s.name.padEnd(16)} ${r.error ? 'FAILED ' + r.error : `${r.seconds.toFixed(2)} s${r.startupSeconds !== undefined ? ` (+${r.startupSeconds.toFixed(2)} s start-up)` : ''}${ok ? '' : ` WRONG answer ${JSON.stringify(r.answer)} (expected ${JSON.stringify(s.expect)})`}${rec.loaded ? ' [loaded]' : ''}`}`)
      }
    }
  }
  const summary = {}
  for (const [k, rs] of Object.entries(runs)) {
    const good = rs.filter((r) => r.ok)
    summary[k] = { ...stats(good.map((r) => r.seconds)), cpu: stats(good.map((r) => r.cpuSeconds)), startup: stats(good.map((r) => r.startupSeconds))?.median, loaded: good.filter((r) => r.loaded).length, failed: rs.length - good.length, npartitions: good[0]?.npartitions }
  }
  const ratios = []
  for (const c of cases) {
    for (const q of RATIOS[c]) {
      const a = summary[`${c}/${q.num}`]
      const b = summary[`${c}/${q.den}`]
      const ratio = a?.median !== undefined && b?.median !== undefined ? a.median / b.median : undefined
      // The same ratio in CPU seconds (every process of a side, its threads included): on a shared machine, the work each side does.
      const cpuRatio = a?.cpu?.median !== undefined && b?.cpu?.median !== undefined ? a.cpu.median / b.cpu.median : undefined
      ratios.push({ case: c, ...q, ratio, cpuRatio, met: q.target === undefined || ratio === undefined ? undefined : ratio <= q.target })
    }
  }
  const result = { command: `node bench/bag/run.js ${argv.join(' ')}`.trim(), date: new Date().toISOString(), wallSeconds: (Date.now() - started) / 1000, machine: mach, data: { text: m?.text, ndjson: m?.ndjson, files: ctx.files && { ...ctx.files, lists: undefined } }, reps: REPS, blocksize: BLOCKSIZE, summary, ratios, runs }
  const outDir = path.join(ROOT, 'bench', 'out')
  fs.mkdirSync(outDir, { recursive: true })
  const file = path.join(outDir, `bag-${result.date.replace(/[:.]/g, '-')}.json`)
  fs.writeFileSync(file, JSON.stringify(result, null, 2))
  if (JSON_OUT) return console.log(JSON.stringify(result, null, 2))
  log('')
  log(`machine: ${mach.nproc} CPUs (${mach.cpu}), ${mach.memTotalGib.toFixed(1)} GiB; node ${mach.node}, python ${mach.python}, dask ${mach.dask}, distributed ${mach.distributed}, duckdb ${mach.duckdb}; ${result.wallSeconds.toFixed(0)} s`)
  log(`seconds of the workload only (cluster/process start-up apart); min / median / max over ${REPS} rep(s); "loaded": runs in the second before which other work kept more than ${LOADED * 100}% of the CPUs busy`)
  log('')
  log(table(['case', 'side', 's min / med / max', 'CPU s min / med / max', 'start-up s', 'partitions', 'loaded', 'failed'], Object.entries(summary).map(([k, s]) => [...k.split('/'), s.n ? `${f2(s.min)} / ${f2(s.median)} / ${f2(s.max)}` : '—', s.cpu ? `${f2(s.cpu.min)} / ${f2(s.cpu.median)} / ${f2(s.cpu.max)}` : '—', f2(s.startup), s.npartitions ?? '', s.loaded, s.failed])))
  log('')
  log(table(['case', 'ratio (medians)', 'value', 'target', 'met', 'in CPU s'], ratios.map((r) => [r.case, r.label, f3(r.ratio), r.target === undefined ? '(report)' : `≤ ${r.target}`, r.met === undefined ? '—' : r.met ? 'yes' : 'NO', f3(r.cpuRatio)])))
  log(`\nraw figures: ${path.relative(ROOT, file)}`)
  process.exitCode = Object.values(summary).some((s) => s.failed) ? 1 : 0
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
