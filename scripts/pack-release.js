#!/usr/bin/env node
// Packs what a release publishes, without publishing: the main package (its
// JavaScript, types and CLI; no .node and no install script; one optional
// dependency per platform package at its own version) and the platform
// packages whose binary is built (npm/<platform>/*.node). Prints the
// tarballs' paths, one per line.
//
//   node scripts/pack-release.js [--out DIR]
'use strict'
const { execFileSync } = require('node:child_process')
const { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { parseArgs } = require('node:util')

const root = resolve(__dirname, '..')
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'target', 'release-packages') } } })
const out = resolve(values.out)
mkdirSync(out, { recursive: true })
const pkg = require(join(root, 'package.json'))

// The platform packages, named as napi's loader looks for them.
const platforms = readdirSync(join(root, 'npm')).filter((d) => existsSync(join(root, 'npm', d, 'package.json')))
const optional = {}
for (const p of platforms) optional[require(join(root, 'npm', p, 'package.json')).name] = pkg.version

const stage = mkdtempSync(join(tmpdir(), 'spillway-pack-'))
try {
  for (const f of ['bin', 'dist', 'index.js', 'index.d.ts', 'README.md']) cpSync(join(root, f), join(stage, f), { recursive: true })
  const published = {
    ...pkg,
    files: ['bin', 'dist', 'index.js', 'index.d.ts'],
    // No install-time script: an installed spillway takes its binary from its platform package.
    scripts: undefined,
    devDependencies: undefined,
    // The benchmarks' Node codec peers are the repository's, not the users'.
    optionalDependencies: optional,
  }
  writeFileSync(join(stage, 'package.json'), JSON.stringify(published, null, 2) + '\n')
  const tarballs = [execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }).trim()]
  for (const p of platforms) {
    const dir = join(root, 'npm', p)
    if (!readdirSync(dir).some((f) => f.endsWith('.node'))) continue
    tarballs.push(execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: dir, encoding: 'utf8' }).trim())
  }
  for (const t of tarballs) console.log(join(out, t.split('\n').pop()))
} finally {
  rmSync(stage, { recursive: true, force: true })
}
