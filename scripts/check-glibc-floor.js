#!/usr/bin/env node
// Checks a Linux addon against a glibc floor: the highest GLIBC_ symbol
// version it needs (objdump -T) is at most --max, and it links nothing but
// glibc's own libraries and libgcc_s. Exits 1 naming what is over.
//
//   node scripts/check-glibc-floor.js path/to/addon.node [--max 2.17]
'use strict'
const { execFileSync } = require('node:child_process')
const { parseArgs } = require('node:util')

// glibc's libraries (the dynamic loader among them: zig links TLS access to
// it, as every glibc program may) and the GCC runtime every C++ or Rust
// binary may need.
const ALLOWED = ['libc.so.6', 'libm.so.6', 'libpthread.so.0', 'libdl.so.2', 'librt.so.1', 'libgcc_s.so.1', 'ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1']

const { values, positionals } = parseArgs({ allowPositionals: true, options: { max: { type: 'string', default: '2.17' }, json: { type: 'boolean', default: false } } })
if (positionals.length !== 1) {
  console.error('usage: node scripts/check-glibc-floor.js <addon.node> [--max 2.17] [--json]')
  process.exit(2)
}
const file = positionals[0]
const cmp = (a, b) => {
  const x = a.split('.').map(Number)
  const y = b.split('.').map(Number)
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0)
  return 0
}
const symbols = execFileSync('objdump', ['-T', file], { encoding: 'utf8' })
const versions = [...new Set([...symbols.matchAll(/GLIBC_(\d+(?:\.\d+)+)/g)].map((m) => m[1]))].sort(cmp)
const highest = versions[versions.length - 1] ?? 'none'
const needed = [...execFileSync('objdump', ['-p', file], { encoding: 'utf8' }).matchAll(/NEEDED\s+(\S+)/g)].map((m) => m[1])
const problems = []
if (highest !== 'none' && cmp(highest, values.max) > 0) {
  problems.push(`needs GLIBC_${highest} (symbols: ${versions.filter((v) => cmp(v, values.max) > 0).map((v) => `GLIBC_${v}`).join(', ')}), above the floor GLIBC_${values.max}`)
}
const extra = needed.filter((n) => !ALLOWED.includes(n))
if (extra.length) problems.push(`links ${extra.join(', ')}, beyond ${ALLOWED.join(', ')}`)
const report = { file, highest, floor: values.max, needed, ok: problems.length === 0, problems }
if (values.json) console.log(JSON.stringify(report))
else console.log(`${file}: highest GLIBC_${highest}, floor GLIBC_${values.max}; links ${needed.join(', ')}${problems.length ? `\n  ${problems.join('\n  ')}` : ''}`)
process.exit(problems.length ? 1 : 0)
