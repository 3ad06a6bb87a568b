#!/usr/bin/env node
// bench/shuffle: spillway's P2P shuffle (bags) against Dask (DataFrame P2P
// shuffle / merge, bag groupby), DuckDB and this machine's floor, on the
// same generated files, as ratios within one run. Every side runs in a fresh
// process (a fresh cluster) per repetition, the order alternating between
// repetitions; min / median / max over the repetitions.
//
//   npm run bench:shuffle            (node bench/shuffle/run.js [flags])
//     --reps N      repetitions (default 5; --quick: 1)
//     --quick       ~300 MB of records (not 3×) on 2 × 512 MiB workers, ~150 MB of text
//     --only a,b    groupby, join, floor, wordcount
//     --no-dask     skip the Dask sides   --no-bag   skip Dask bag's groupby
//     --no-profile  skip the profiled spillway runs
//     --json        the figures as JSON
//
// Data: generated once into $TMPDIR/spillway-bench-shuffle/<size>/ (gen.js).
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { ROOT, PY, pythonEnv, ensureVenv, machine } = require('../dask/sides')
const { LOADED } = require('../load')
const { ensureData } = require('./gen')
const { workerProfiles } = require('./profile')
const { runProc: run, spreadOf } = require('../proc')

const { values: opts } = parseArgs({
  options: {
    reps: { type: 'string' },
    quick: { type: 'boolean' },
    only: { type: 'string' },
    'no-dask': { type: 'boolean' },
    'no-bag': { type: 'boolean' },
    'no-profile': { type: 'boolean' },
    json: { type: 'boolean' },
    verbose: { type: 'boolean' },
  },
  strict: false,
})
const QUICK = !!opts.quick
const REPS = Number(opts.reps ?? (QUICK ? 1 : 5))
const ONLY = typeof opts.only === 'string' ? opts.only.split(',') : undefined
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a)
const MiB = 2 ** 20

// Records at ~3× the 2 workers' memory (3 GB on 2 × 512 MiB; quick: 300 MB
// on the same workers). 512 MiB is the least Dask's workers run in: at 256
// MiB a pandas worker starts near its limit and every one is killed (the
// first quick run, BENCHMARKS.md). Text for the word count on 2 × 1 GiB
// workers, as the issue's. Dask's workers get `daskMem` (1 GiB): at 512 MiB
// its P2P shuffle of even 300 MB is killed (unmanaged memory 363 MiB, the
// nanny's 95 % restart, KilledWorker after 4 tries: the second quick run).
const SIZE = QUICK
  ? { data: { tag: 'quick', leftBytes: 300e6, files: 12, keys: 600_000, payload: 80, textBytes: 150e6, textFiles: 12, vocab: 1_000_000 }, mem: 512 * MiB, blocksize: 16 * MiB, wcMem: 1024 * MiB, wcBlocksize: 16 * MiB, daskMem: 1024 * MiB, timeout: 300 }
  : { data: { tag: 'default', leftBytes: 3e9, files: 48, keys: 4_000_000, payload: 80, textBytes: 1.5e9, textFiles: 48, vocab: 5_450_000 }, mem: 512 * MiB, blocksize: 32 * MiB, wcMem: 1024 * MiB, wcBlocksize: 32 * MiB, daskMem: 1024 * MiB, timeout: 600 }
const WORKERS = 2

const runProc = (cmd, args, env, timeoutS) => run(cmd, args, env, timeoutS, { verbose: opts.verbose, python: cmd === PY })

const TARGET = { dask: 0.25, floor: 1.5, duckdbWordcount: 1 }

function spillway(c, data, { mem, blocksize, env = process.env, extra = [] } = {}) {
  const args = [path.join(__dirname, 'spillway_side.js'), '--case', c, '--dir', data.dir, '--mem', String(mem), '--blocksize', String(blocksize), '--workers', String(WORKERS), ...extra]
  return runProc(process.execPath, args, env, SIZE.timeout)
}

function python(c, data, { mem, blocksize }) {
  const args = [path.join(__dirname, 'py_side.py'), '--case', c, '--dir', data.dir, '--mem', String(mem), '--blocksize', String(blocksize), '--workers', String(WORKERS)]
  return runProc(PY, args, pythonEnv(), SIZE.timeout)
}

/** The machine's rates: one rates.js per worker at once, summed. */
async function rates(data) {
  const sample = path.join(data.dir, 'left', 'part-000.csv')
  const mb = String(Math.round(data.leftBytes / WORKERS / 1e6))
  const each = await Promise.all(Array.from({ length: WORKERS }, () => runProc(process.execPath, [path.join(__dirname, 'rates.js'), '--write-mb', mb, '--sample', sample], process.env, 300)))
  const bad = each.find((r) => r.error)
  if (bad) return { error: bad.error }
  const sum = (k) => each.reduce((a, r) => a + r[k], 0)
  return { write: sum('write'), read: sum('read'), hash: sum('hash'), keyBytesPerKey: each[0].keyBytesPerKey, busyBefore: each[0].busyBefore }
}

/** The least time a shuffle of the records could take here: their bytes written once and read once through the page cache, every key hashed once. */
function floorOf(r, data) {
  const bytes = data.leftBytes
  const keyBytes = data.rows * r.keyBytesPerKey
  const terms = { write: bytes / r.write, read: bytes / r.read, hash: keyBytes / r.hash }
  return { terms, seconds: terms.write + terms.read + terms.hash, bytes, keyBytes }
}

const f2 = (x) => (x === undefined ? '—' : x.toFixed(2))
const f3 = (x) => (x === undefined ? '—' : x.toFixed(3))
const spread = (s, f = f2) => (s ? `${f(s.min)} / ${f(s.median)} / ${f(s.max)}` : '—')
const mib = (b) => (b / MiB).toFixed(0)

async function main() {
  const wantDask = !opts['no-dask']
  const wantBag = wantDask && !opts['no-bag']
  const suites = ['groupby', 'join', 'floor', 'wordcount'].filter((s) => !ONLY || ONLY.includes(s))
  ensureVenv(log)
  const data = ensureData(SIZE.data, log)
  const m = machine()
  const loadStart = os.loadavg()
  const big = { mem: SIZE.mem, blocksize: SIZE.blocksize }
  const wc = { mem: SIZE.wcMem, blocksize: SIZE.wcBlocksize }
  const dk = { mem: SIZE.daskMem, blocksize: SIZE.blocksize }
  // Each suite: its sides, each a function of the data giving a run.
  const SIDES = {
    groupby: [
      ['spillway', () => spillway('groupby', data, big)],
      ...(wantDask ? [['dask-p2p', () => python('dask-p2p-groupby', data, dk)]] : []),
      ...(wantBag ? [['dask-bag', () => python('dask-bag-groupby', data, dk)]] : []),
      ['duckdb', () => python('duckdb-groupby', data, big)],
    ],
    join: [
      ['spillway', () => spillway('join', data, big)],
      ...(wantDask ? [['dask-p2p', () => python('dask-p2p-join', data, dk)]] : []),
      ['duckdb', () => python('duckdb-join', data, big)],
    ],
    floor: [
      ['floor', async () => rates(data)],
      ['spillway', () => spillway('trivial', data, big)],
    ],
    wordcount: [
      ['spillway', () => spillway('wordcount', data, wc)],
      ['duckdb', () => python('duckdb-wordcount', data, wc)],
    ],
  }
  const expected = {
    groupby: [data.groups, data.rows],
    join: data.joinRows,
    floor: data.rows + data.spec.files,
    wordcount: [data.distinctWords, data.words],
  }
  log(`bench/shuffle: ${suites.join(', ')} × ${REPS} reps; records ${(data.leftBytes / 1e9).toFixed(2)} GB (${data.rows} rows, ${data.groups} keys) on ${WORKERS} × ${mib(SIZE.mem)} MiB = ${(data.leftBytes / (WORKERS * SIZE.mem)).toFixed(1)}× their memory; text ${(data.textBytes / 1e9).toFixed(2)} GB (${data.words} words, ${data.distinctWords} distinct) on ${WORKERS} × ${mib(SIZE.wcMem)} MiB; Dask's workers ${WORKERS} × ${mib(SIZE.daskMem)} MiB; load ${loadStart.map((l) => l.toFixed(2)).join(' ')}`)
  const runs = Object.fromEntries(suites.map((s) => [s, []]))
  const started = Date.now()
  for (let rep = 0; rep < REPS; rep++) {
    for (const [si, s] of suites.entries()) {
      const sides = SIDES[s]
      const order = (rep + si) % 2 ? [...sides].reverse() : sides
      const row = { rep }
      for (const [name, fn] of order) {
        const r = await fn()
        if (!r.error && name !== 'floor') r.ok = JSON.stringify(r.answer) === JSON.stringify(expected[s])
        if (name === 'floor' && !r.error) Object.assign(r, floorOf(r, data))
        row[name] = r
        const rss = r.peakRss ? `, peak rss ${r.peakRss.map(mib).join(' / ')} MiB of ${mib(r.memoryLimit)}` : ''
        log(`  rep ${rep + 1}/${REPS} ${s.padEnd(9)} ${name.padEnd(9)} ${r.error ? 'FAILED ' + r.error : `${f2(r.seconds)} s${r.answer !== undefined ? `, answer ${JSON.stringify(r.answer)}${r.ok ? '' : ' WRONG'}` : ''}${rss}`}`)
      }
      runs[s].push(row)
    }
  }
  // The spillway side's worker profiles (one more run each, untimed).
  const profiles = {}
  if (!opts['no-profile']) {
    for (const s of suites) {
      const c = s === 'floor' ? 'trivial' : s
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-prof-'))
      const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${path.join(__dirname, 'cpu-prof-hook.js')}`.trim(), SPILLWAY_BENCH_PROFILE_DIR: dir }
      const r = await spillway(c, data, { ...(s === 'wordcount' ? wc : big), env })
      if (r.error) log(`  profile ${s}: FAILED ${r.error}`)
      else profiles[s] = { seconds: r.seconds, workers: workerProfiles(dir, r.pid) }
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  // ---- summary ----
  const summary = {}
  for (const s of suites) {
    const rows = runs[s]
    const ok = (name) => rows.map((r) => r[name]).filter((r) => r && !r.error)
    const secs = (name) => spreadOf(ok(name).map((r) => r.seconds))
    const paired = (a, b, fa = (r) => r.seconds, fb = (r) => r.seconds) => spreadOf(rows.filter((r) => r[a] && !r[a].error && r[b] && !r[b].error).map((r) => fa(r[a]) / fb(r[b])))
    const names = SIDES[s].map(([n]) => n)
    const sp = ok('spillway')
    summary[s] = {
      seconds: Object.fromEntries(names.map((n) => [n, secs(n)])),
      errors: Object.fromEntries(names.map((n) => [n, rows.map((r) => r[n]?.error).filter(Boolean)])),
      answersOk: Object.fromEntries(names.filter((n) => n !== 'floor').map((n) => [n, ok(n).length > 0 && ok(n).every((r) => r.ok)])),
      ratios: Object.fromEntries(names.filter((n) => n !== 'spillway').map((n) => [n, paired('spillway', n)])),
      peakRssMiB: { max: Math.max(...sp.flatMap((r) => r.peakRss)) / MiB, limitMiB: (sp[0]?.memoryLimit ?? 0) / MiB, perRep: sp.map((r) => r.peakRss.map((b) => Math.round(b / MiB))) },
      withinLimit: sp.length > 0 && sp.every((r) => r.peakRss.every((b) => b <= r.memoryLimit)),
      spillMiB: spreadOf(sp.map((r) => r.spillBytesWritten / MiB)),
      loadedRuns: rows.reduce((a, r) => a + Object.values(r).filter((x) => x?.busyBefore > LOADED).length, 0),
      dask: names.includes('dask-p2p') ? { peakRssMiB: ok('dask-p2p').map((r) => r.peakRss.map((b) => Math.round(b / MiB))) } : undefined,
    }
    if (s === 'floor') summary[s].floorTerms = Object.fromEntries(['write', 'read', 'hash'].map((k) => [k, spreadOf(ok('floor').map((r) => r.terms[k]))]))
    if (s === 'floor') summary[s].rates = Object.fromEntries(['write', 'read', 'hash'].map((k) => [k, spreadOf(ok('floor').map((r) => r[k] / 1e9))]))
  }
  const targets = []
  for (const s of ['groupby', 'join']) if (summary[s]?.ratios['dask-p2p']) targets.push({ what: `${s}: spillway / Dask P2P`, ratio: summary[s].ratios['dask-p2p'].median, target: TARGET.dask })
  if (summary.floor?.ratios.floor) targets.push({ what: 'trivial shuffle: spillway / floor', ratio: summary.floor.ratios.floor.median, target: TARGET.floor })
  if (summary.wordcount?.ratios.duckdb) targets.push({ what: 'word count: spillway / DuckDB', ratio: summary.wordcount.ratios.duckdb.median, target: TARGET.duckdbWordcount })
  for (const s of suites) targets.push({ what: `${s}: spillway peak rss ≤ each worker's limit`, ratio: summary[s].peakRssMiB.max / summary[s].peakRssMiB.limitMiB, target: 1 })
  for (const t of targets) t.met = t.ratio !== undefined && t.ratio <= t.target
  const result = { command: `node bench/shuffle/run.js ${process.argv.slice(2).join(' ')}`.trim(), date: new Date().toISOString(), wallSeconds: (Date.now() - started) / 1000, machine: m, load: { start: loadStart, end: os.loadavg() }, size: SIZE, data, reps: REPS, summary, targets, profiles, runs }
  const outDir = path.join(ROOT, 'bench', 'out')
  fs.mkdirSync(outDir, { recursive: true })
  const file = path.join(outDir, `shuffle-${result.date.replace(/[:.]/g, '-')}.json`)
  fs.writeFileSync(file, JSON.stringify(result, null, 2))
  if (opts.json) return console.log(JSON.stringify(result, null, 2))
  log('')
  log(`machine: ${m.nproc} CPUs (${m.cpu}), ${m.memTotalGib.toFixed(1)} GiB; node ${m.node}, python ${m.python}, dask ${m.dask}; load at start ${loadStart.map((l) => l.toFixed(2)).join(' ')}, at end ${result.load.end.map((l) => l.toFixed(2)).join(' ')}; ${result.wallSeconds.toFixed(0)} s`)
  for (const s of suites) {
    const S = summary[s]
    log('')
    log(`${s}: seconds min / median / max (answers ${Object.entries(S.answersOk).map(([n, v]) => `${n} ${v ? 'ok' : 'WRONG'}`).join(', ')}${S.loadedRuns ? `; ${S.loadedRuns} loaded runs` : ''})`)
    for (const [n, v] of Object.entries(S.seconds)) log(`  ${n.padEnd(9)} ${spread(v)}${S.errors[n].length ? `  (${S.errors[n].length} failed: ${S.errors[n][0].slice(0, 200)})` : ''}`)
    for (const [n, v] of Object.entries(S.ratios)) log(`  spillway / ${n.padEnd(9)} ${spread(v, f3)}`)
    log(`  spillway peak rss per worker: max ${S.peakRssMiB.max.toFixed(0)} MiB of ${S.peakRssMiB.limitMiB.toFixed(0)} MiB (${S.withinLimit ? 'within' : 'OVER'} the limit); per rep ${JSON.stringify(S.peakRssMiB.perRep)}; spilled ${spread(S.spillMiB, (x) => x.toFixed(0))} MiB`)
    if (S.dask) log(`  Dask P2P peak rss per worker (MiB): ${JSON.stringify(S.dask.peakRssMiB)}`)
    if (S.floorTerms) log(`  floor terms (s): ${Object.entries(S.floorTerms).map(([k, v]) => `${k} ${spread(v)}`).join('; ')}; rates GB/s: ${Object.entries(S.rates).map(([k, v]) => `${k} ${spread(v)}`).join('; ')}`)
    const p = profiles[s]
    if (p) {
      for (const w of p.workers) log(`  profile ${w.file} (${f2(w.seconds)} s sampled, run ${f2(p.seconds)} s): ${w.categories.slice(0, 7).map((c) => `${c.what} ${(100 * c.share).toFixed(0)}%`).join('; ')}`)
      if (p.workers[0]) log(`    top functions: ${p.workers[0].functions.slice(0, 8).map((f) => `${f.what} ${(100 * f.share).toFixed(0)}%`).join('; ')}`)
    }
  }
  log('')
  log('| target | ratio (median) | needed | met |\n|---|---|---|---|')
  for (const t of targets) log(`| ${t.what} | ${f3(t.ratio)} | ≤ ${t.target} | ${t.met ? 'yes' : 'NO'} |`)
  log(`\nraw figures: ${path.relative(ROOT, file)}`)
  const wrong = suites.some((s) => Object.values(summary[s].answersOk).some((v) => !v))
  process.exitCode = wrong ? 1 : 0
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
