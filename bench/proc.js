// One side of a benchmark in a fresh process: its last stdout line is its
// JSON result; a failure keeps the error's own line and the stderr tail.
// The machine's load in the half-second before is recorded with it.
'use strict'

const { spawn } = require('node:child_process')
const { busyShare } = require('./load')

/** Runs `cmd`; resolves to its JSON line (plus busyBefore), or { error, stderrTail }. `python`: the error is the last matching line. */
function runProc(cmd, args, env, timeoutS, { verbose = false, python = false } = {}) {
  return new Promise((resolve) => {
    const busy = busyShare(500)
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => {
      err += d
      if (err.length > 1e6) err = err.slice(-1e5)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutS * 1000)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (verbose && err) process.stderr.write(err)
      const last = out.trim().split('\n').pop()
      // The error's own line (a Python exception's last line, a Node error's first) and what follows.
      const lines = err.trim().split('\n')
      const at = lines[python ? 'findLastIndex' : 'findIndex']((l) => /^\w*(Error|Exception|KilledWorker)\b|^[\w.]+(Error|Worker): |ERR_SPILLWAY/.test(l.trim()))
      const why = (at >= 0 ? lines.slice(at, at + 2) : lines.slice(-3)).join(' | ').slice(0, 600)
      if (code !== 0 || !last) return resolve({ error: `exit ${code ?? signal}${signal === 'SIGKILL' ? ` (over ${timeoutS} s)` : ''}: ${why}`, stderrTail: err.slice(-4000), busyBefore: busy })
      try {
        resolve({ ...JSON.parse(last), busyBefore: busy })
      } catch (e) {
        resolve({ error: `unreadable output: ${last.slice(0, 200)}`, busyBefore: busy })
      }
    })
  })
}

/** min / median / max (and n) of the finite numbers among xs. */
function spreadOf(xs) {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  if (!s.length) return undefined
  const m = s.length >> 1
  return { min: s[0], median: s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2, max: s[s.length - 1], n: s.length }
}
module.exports = { runProc, spreadOf }
