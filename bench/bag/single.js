#!/usr/bin/env node
// The single Node process of bench/bag (a): every file read whole with
// fs.readFileSync, split into lines, filtered and counted, file by file.
// Prints one JSON line.
'use strict'

const fs = require('node:fs')
const { globSync } = require('tinyglobby')

const m = JSON.parse(fs.readFileSync(process.argv[process.argv.indexOf('--manifest') + 1], 'utf8'))
const t = process.hrtime.bigint()
let answer = 0
for (const f of globSync(m.text.glob, { absolute: true, onlyFiles: true })) {
  const lines = fs.readFileSync(f, 'utf8').split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  for (const line of lines) if (line.includes('ERROR')) answer++
}
const seconds = Number(process.hrtime.bigint() - t) / 1e9
console.log(JSON.stringify({ side: 'single', case: 'text', seconds, answer }))
