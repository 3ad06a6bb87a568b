// A .cpuprofile's self time, summed per node and per function (name and
// file:line), for the profile scripts of bench/bag and bench/frame.
const path = require('node:path')

/** Self time in µs by node id and by function, the total sampled and the idle part. */
function selfTimes(p) {
  const dt = new Map()
  for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
  const byFn = new Map()
  let total = 0
  for (const n of p.nodes) {
    const us = dt.get(n.id) ?? 0
    total += us
    const cf = n.callFrame
    const name = `${cf.functionName || '(anonymous)'} ${cf.url ? path.basename(cf.url) + ':' + (cf.lineNumber + 1) : ''}`.trim()
    byFn.set(name, (byFn.get(name) ?? 0) + us)
  }
  return { dt, byFn, total, idle: byFn.get('(idle)') ?? 0 }
}

module.exports = { selfTimes }
