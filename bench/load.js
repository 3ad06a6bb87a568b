// How busy the machine is with work other than the benchmark's: the share
// of CPU time not idle over a short window in which the benchmark runs
// nothing (from /proc/stat; undefined where there is none). The load average
// cannot tell this apart: it still counts the previous run for a minute.
'use strict'

const fs = require('node:fs')

function cpuTimes() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]
    const [, ...v] = line.trim().split(/\s+/)
    const n = v.map(Number)
    // user nice system idle iowait irq softirq steal ...
    const idle = n[3] + (n[4] || 0)
    const total = n.slice(0, 8).reduce((a, b) => a + b, 0)
    return { idle, total }
  } catch {
    return undefined
  }
}

/** Fraction (0..1) of all CPUs busy during the next `ms` milliseconds. */
function busyShare(ms = 1000) {
  const a = cpuTimes()
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
  const b = cpuTimes()
  if (!a || !b || b.total === a.total) return undefined
  return 1 - (b.idle - a.idle) / (b.total - a.total)
}

/** A run is called loaded when other work kept a quarter of the CPUs busy just before it. */
const LOADED = 0.25

module.exports = { busyShare, LOADED }
