// Where a spillway worker's time goes: the self time of a `node --cpu-prof`
// profile (.cpuprofile), summed by function and by category.
'use strict'

const fs = require('node:fs')
const path = require('node:path')

const CATEGORIES = [
  ['idle (waiting: peers, the scheduler, the disk)', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['v8 serialize / deserialize (shards)', (f) => /^(serialize|deserialize|writeValue|readValue|_writeHostObject|_readHostObject|writeHeader|readHeader|releaseBuffer)$/.test(f.functionName) || /node:v8|lib\/v8\.js/.test(f.url)],
  ['line splitting / text decoding (reading the files)', (f) => /text-blocks|readers|string_decoder|buffer\.js/.test(f.url) || /^(toString|utf8Slice|latin1Slice|split)$/.test(f.functionName)],
  ['hashing keys', (f) => f.functionName === 'hashKey'],
  ['grouping / join / aggregating: Maps of keys (split-side combine and collect)', (f) => /shuffle-tasks|bag-reducers/.test(f.url)],
  ['bag steps (parse, map, filter: fused partition)', (f) => /bag-partition|user-functions/.test(f.url) || f.url === '' && f.functionName !== '(program)' && !f.functionName.startsWith('(')],
  ['spill buffer / store (incl. native compression)', (f) => /store|spill/.test(f.url)],
  ['async_hooks (promise tracking)', (f) => /async_hooks/.test(f.url)],
  ['sockets, frames, messages', (f) => /net\.js|stream|comm\/|wire\/|frame|socket/.test(f.url)],
  ['(program): native code not attributed', (f) => f.functionName === '(program)'],
]

function summarise(file) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8'))
  const self = new Map(p.nodes.map((n) => [n.id, 0]))
  const dt = p.timeDeltas
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], self.get(p.samples[i]) + (dt[i] ?? 0))
  const byFn = new Map()
  const byCat = new Map()
  let total = 0
  for (const n of p.nodes) {
    const us = self.get(n.id)
    if (!us) continue
    total += us
    const f = n.callFrame
    const name = `${f.functionName || '(anonymous)'} ${f.url ? path.basename(f.url) : ''}`.trim()
    byFn.set(name, (byFn.get(name) ?? 0) + us)
    const cat = CATEGORIES.find(([, test]) => test(f))?.[0] ?? 'other JavaScript / node internals'
    byCat.set(cat, (byCat.get(cat) ?? 0) + us)
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k, us]) => ({ what: k, seconds: us / 1e6, share: us / total }))
  return { file: path.basename(file), seconds: total / 1e6, categories: sorted(byCat), functions: sorted(byFn).slice(0, 15) }
}

/** The profiles in `dir` other than the process `mainPid`'s (the client's): the workers'. */
function workerProfiles(dir, mainPid) {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile') && !f.includes(`.${mainPid}.`))
    .map((f) => summarise(path.join(dir, f)))
    .sort((a, b) => b.seconds - a.seconds)
}

module.exports = { summarise, workerProfiles }
