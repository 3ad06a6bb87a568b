#!/usr/bin/env node
// Runs one lane of the ava specs (__test__/lanes/lanes.mjs) as several ava
// processes side by side, each taking every Nth spec of the lane (as
// SPILLWAY_TEST_SHARD=i/N). ava's own file concurrency would also run a
// file's tests at once, and a cluster spec may start a cluster per test;
// separate processes keep each file serial and still overlap the waiting.
// Their output is passed on line by line, each ava's summary included.
//
//   node scripts/test-lane.js unit|cluster|scale|release [--shards N]
'use strict'
const { spawn } = require('node:child_process')
const { createInterface } = require('node:readline')
const { join } = require('node:path')
const { parseArgs } = require('node:util')
const { pathToFileURL } = require('node:url')

const ROOT = join(__dirname, '..')

async function main() {
  const { lanes, shards } = await import(pathToFileURL(join(ROOT, '__test__', 'lanes', 'lanes.mjs')).href)
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { shards: { type: 'string' } } })
  const lane = positionals[0]
  if (positionals.length !== 1 || !(lane in lanes)) {
    console.error(`usage: node scripts/test-lane.js ${Object.keys(lanes).join('|')} [--shards N] (got ${positionals.join(' ') || 'no lane'})`)
    return 2
  }
  const n = values.shards === undefined ? shards[lane] : Number(values.shards)
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--shards must be a whole number of at least 1, not ${values.shards}`)
    return 2
  }
  const count = Math.min(n, lanes[lane].length)
  const start = Date.now()
  const codes = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'ava', 'entrypoints', 'cli.mjs'), '--config', join(ROOT, '__test__', 'lanes', `${lane}.config.mjs`)], {
        cwd: ROOT,
        env: { ...process.env, SPILLWAY_TEST_SHARD: count > 1 ? `${i}/${count}` : '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${line}\n`))
      return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))))
    }),
  )
  const failed = codes.filter((c) => c !== 0).length
  console.log(`${lane} lane: ${count} ava process(es), ${((Date.now() - start) / 1000).toFixed(0)} s${failed ? `, ${failed} failed` : ''}`)
  return failed ? 1 : 0
}

main().then((code) => (process.exitCode = code))
