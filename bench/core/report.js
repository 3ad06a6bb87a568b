// bench/core's tables: codecs against their Node peers, generation and sums
// against numpy, the SpillBuffer against node:fs, and the targets. Rates are
// medians with (min–max) over the alternating rounds.
'use strict'

const { LOADED } = require('../load')

function fmt(x, d = 0) {
  return x === undefined ? '—' : x.toFixed(d)
}

function table(header, rows) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) => '| ' + cells.map((c, i) => String(c).padEnd(w[i])).join(' | ') + ' |'
  return [line(header), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...rows.map(line)].join('\n')
}

/** A spread as "median (min–max)". */
function spr(s, d = 0) {
  return s === undefined ? '—' : `${fmt(s.median, d)} (${fmt(s.min, d)}–${fmt(s.max, d)})`
}

function printReport(result) {
  const { codecs, compute, spill, targets, load } = result
  const N = result.n
  const pct = (x) => (x === undefined ? '?' : `${Math.round(100 * x)}%`)
  console.log(`\nother work kept ${pct(load.busyStart)} of the CPUs busy in the second before the run and ${pct(load.busyEnd)} after it${load.busyStart > LOADED || load.busyEnd > LOADED ? ' (loaded)' : ''}; load average at start ${load.start.map((l) => l.toFixed(2)).join(' ')}, at end ${load.end.map((l) => l.toFixed(2)).join(' ')} (${result.cpus} CPUs)`)
  console.log('\n### Codecs (32 MB; MB/s = 10^6 bytes/s; c×/d× = spillway\'s faster variant / fastest peer variant, × async = spillway / the peer\'s async API; >1 = spillway faster)\n')
  console.log(
    table(
      ['data', 'codec', 'size ratio', 'spillway c MB/s', 'spillway d MB/s', 'peer c MB/s (best)', 'peer d MB/s (best)', 'c ×', 'd ×', 'c × async', 'd × async'],
      codecs.map((r) => {
        const best = (k) => (r.peers.length ? r.peers.reduce((a, b) => (b[k].median > a[k].median ? b : a))[k] : undefined)
        return [
          r.data,
          r.codec,
          fmt(r.spillway.ratio, 2) + (r.peers.length ? ` (peer ${fmt(r.peers[0].ratio, 2)})` : ''),
          `${spr(r.spillway.compress)} ${r.spillway.compressMode}`,
          `${spr(r.spillway.decompress)} ${r.spillway.decompressMode}`,
          r.best ? `${spr(best('compress'))} ${r.best.compress}` : '—',
          r.best ? `${spr(best('decompress'))} ${r.best.decompress}` : '—',
          r.best ? fmt(r.best.compressRatio, 2) : '—',
          r.best ? fmt(r.best.decompressRatio, 2) : '—',
          r.vsAsync ? fmt(r.vsAsync.compressRatio, 2) : '—',
          r.vsAsync ? fmt(r.vsAsync.decompressRatio, 2) : '—',
        ]
      }),
    ),
  )
  console.log('\nEvery variant (MB/s):\n')
  console.log(
    table(
      ['data', 'codec', 'peer', 'mode', 'size ratio', 'c MB/s', 'd MB/s'],
      codecs.flatMap((r) => [
        ...r.spillway.variants.map((v) => [r.data, r.codec, 'spillway', v.mode, fmt(r.spillway.ratio, 2), spr(v.compress), spr(v.decompress)]),
        ...r.peers.map((p) => [r.data, r.codec, p.name, p.mode, fmt(p.ratio, 2), spr(p.compress), spr(p.decompress)]),
      ]),
    ),
  )
  console.log(`\n### Generation and sums (${N.toLocaleString('en')} values; numpy ${compute.numpy ?? 'unavailable'}; ratio = numpy time / spillway time; ${compute.rounds} alternating rounds, each a median of many calls)\n`)
  console.log(
    table(
      ['what', 'spillway ms', 'numpy ms', 'ratio (medians)'],
      compute.rows.map((r) => [r.what, spr(r.spillwayMs, 2), spr(r.numpyMs, 2), fmt(r.ratio, 2)]),
    ),
  )
  if (spill) console.log(`\n### SpillBuffer (${spill.chunks} × 4 MiB incompressible, all forced to disk, in ${spill.dir}; medians of ${spill.rounds} alternating rounds; write+read MB/s median (min–max))\n`)
  if (spill) console.log(
    table(
      ['', 'write MB/s', 'read MB/s', 'write+read MB/s'],
      [
        ['spillway SpillBuffer set/get', fmt(spill.spillway.writeMBs), fmt(spill.spillway.readMBs), spr(spill.spillway.total)],
        ['node:fs writeFile/readFile', fmt(spill.fs.writeMBs), fmt(spill.fs.readMBs), spr(spill.fs.total)],
        ['ratio', fmt(spill.spillway.writeMBs / spill.fs.writeMBs, 2), fmt(spill.spillway.readMBs / spill.fs.readMBs, 2), fmt(spill.ratio, 2)],
      ],
    ),
  )
  console.log('\n### Targets\n')
  console.log(
    table(
      ['target', 'ratio (medians)', 'needed', 'met'],
      targets.map((t) => [t.what, fmt(t.ratio, 2), `≥ ${t.target.toFixed(1)}`, t.met === undefined ? '—' : t.met ? 'yes' : 'NO']),
    ),
  )
  const missed = targets.filter((t) => t.met === false).length
  console.log(`\n${targets.length - missed} of ${targets.length} targets met`)
}

module.exports = { printReport }
