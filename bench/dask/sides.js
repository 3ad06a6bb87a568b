// Running bench/dask's two sides: the Python environment under bench/.venv
// (Dask, distributed, numpy, the codecs, pandas, pyarrow and DuckDB, set up by bench/setup-venv.sh),
// the machine's description, and one case of one side in a fresh process.
// Shared by bench/dask and bench/limit.
'use strict'

const { spawnSync, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { busyShare } = require('../load')

const ROOT = path.resolve(__dirname, '..', '..')
const VENV = path.join(ROOT, 'bench', '.venv')
const PY = path.join(VENV, 'bin', 'python')
// PyPI names and the modules they provide.
// pandas and pyarrow: Dask DataFrame (bench/shuffle); duckdb: bench/shuffle's other side.
const PY_PACKAGES = { dask: 'dask', distributed: 'distributed', numpy: 'numpy', lz4: 'lz4', zstandard: 'zstandard', 'python-snappy': 'snappy', pandas: 'pandas', pyarrow: 'pyarrow', duckdb: 'duckdb' }

function pythonEnv() {
  // Some processors get OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE set; numpy runs
  // here without them (as in bench/core).
  const env = { ...process.env }
  delete env.OPENBLAS_CORETYPE
  delete env.OPENBLAS_L2_SIZE
  return env
}

function venvReady() {
  if (!fs.existsSync(PY)) return false
  const r = spawnSync(PY, ['-c', `import ${Object.values(PY_PACKAGES).join(', ')}`], { env: pythonEnv(), stdio: 'ignore' })
  return r.status === 0
}

/** Creates or completes bench/.venv; a venv that imports everything is left as is. */
function ensureVenv(log = console.log) {
  if (venvReady()) return
  log('Setting up bench/.venv with ' + Object.keys(PY_PACKAGES).join(', ') + ' …')
  const extra = Object.keys(PY_PACKAGES).filter((p) => p !== 'numpy').join(' ')
  const script = path.join(ROOT, 'bench', 'setup-venv.sh')
  const env = { ...pythonEnv(), BENCH_EXTRA_PACKAGES: extra }
  try {
    execFileSync('bash', [script], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  } catch {
    // setup-venv.sh checks the imports by package name, which misses
    // python-snappy's module; whatever it reports, the check below decides.
  }
  if (!venvReady()) {
    execFileSync(path.join(VENV, 'bin', 'pip'), ['install', '--quiet', ...Object.keys(PY_PACKAGES)], { env, stdio: 'inherit' })
  }
  if (!venvReady()) throw new Error(`bench/.venv cannot import ${Object.values(PY_PACKAGES).join(', ')}`)
}

function sh(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', env: pythonEnv() }).trim()
  } catch {
    return undefined
  }
}

function machine() {
  const model = (sh('lscpu', []) || '').split('\n').find((l) => /^Model name/.test(l))
  const pyv = sh(PY, ['-c', 'import sys, dask, distributed, numpy; print(sys.version.split()[0], dask.__version__, distributed.__version__, numpy.__version__)'])
  const [python, dask, distributed, numpy] = (pyv || '').split(' ')
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpu: model ? model.replace(/^Model name:\s*/, '') : os.cpus()[0]?.model,
    memTotalGib: os.totalmem() / 2 ** 30,
    freeG: sh('free', ['-g']),
    node: process.version,
    python,
    dask,
    distributed,
    numpy,
    spillway: require(path.join(ROOT, 'package.json')).version,
  }
}

/** Runs one side's script for case `c` at `size`; its JSON line, or `{ error }`. */
function runSide(side, c, size, verbose = false) {
  const args = ['--case', c.case, '--codec', c.codec, '--n', String(size.n), '--chunk', String(size.chunk), '--ntasks', String(size.ntasks), '--slices', String(size.slices), '--records', String(size.records)]
  const [cmd, script, env] =
    side === 'dask'
      ? [PY, path.join(__dirname, 'dask_bench.py'), pythonEnv()]
      : [process.execPath, path.join(__dirname, 'spillway_bench.js'), process.env]
  const load = os.loadavg()[0]
  const busy = busyShare()
  const r = spawnSync(cmd, [script, ...args], { env, encoding: 'utf8', timeout: 15 * 60_000, maxBuffer: 64 << 20 })
  if (verbose && r.stderr) process.stderr.write(r.stderr)
  const last = (r.stdout || '').trim().split('\n').pop()
  if (r.status !== 0 || !last) {
    const why = r.error ? r.error.message : `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}`
    return { side, error: `${why}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}` }
  }
  return { ...JSON.parse(last), loadBefore: load, busyBefore: busy }
}

module.exports = { ROOT, PY, pythonEnv, ensureVenv, machine, runSide }
