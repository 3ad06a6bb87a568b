#!/usr/bin/env node
// The single Node process of bench/bag: every file read whole with
// fs.readFileSync, split into lines and counted, file by file. Prints one
// JSON line.
//
//   node single.js --manifest M                 (a) text: lines that include 'ERROR'
//   node single.js --case files --glob G        small files: lines, and lines matching /\bstatic\b/
'use strict'

const fs = require('node:fs')
const { globSync } = require('tinyglobby')

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : dflt
}
const c = arg('--case', 'text')
const m = arg('--manifest') ? JSON.parse(fs.readFileSync(arg('--manifest'), 'utf8')) : {}
const u0 = process.cpuUsage()
const cpu0 = (u0.user + u0.system) / 1e6
const t = process.hrtime.bigint()
let answer
if (c === 'files') {
  let lines = 0
  let matches = 0
  for (const f of globSync(arg('--glob', m.files?.glob), { absolute: true, onlyFiles: true })) {
    const all = fs.readFileSync(f, 'utf8').split('\n')
    if (all[all.length - 1] === '') all.pop()
    lines += all.length
    for (const line of all) if (/\bstatic\b/.test(line)) matches++
  }
  answer = { lines, matches }
} else {
  answer = 0
  for (const f of globSync(m.text.glob, { absolute: true, onlyFiles: true })) {
    const lines = fs.readFileSync(f, 'utf8').split('\n')
    if (lines[lines.length - 1] === '') lines.pop()
    for (const line of lines) if (line.includes('ERROR')) answer++
  }
}
const seconds = Number(process.hrtime.bigint() - t) / 1e9
const u = process.cpuUsage()
console.log(JSON.stringify({ side: 'single', case: c, seconds, cpuSeconds: (u.user + u.system) / 1e6 - cpu0, answer }))
