#!/usr/bin/env node
// Builds the addon (`npm run build:native`) only when a Rust source,
// manifest or the lock file is newer than the built addon, or there is none.
// `napi build` would find nothing to do itself, but the first build after a
// fresh one recompiles and links the addon crate regardless (napi sets an
// environment variable on a fresh build that its build script watches):
// two minutes of every `npm test` just after `npm install`.
'use strict'
const { execSync } = require('node:child_process')
const { readdirSync, statSync } = require('node:fs')
const { join } = require('node:path')

const ROOT = join(__dirname, '..')

/** The newest modification time under `dir` (its .rs and .toml files). */
function newest(dir) {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) t = Math.max(t, newest(p))
    else if (/\.(rs|toml)$/.test(e.name)) t = Math.max(t, statSync(p).mtimeMs)
  }
  return t
}

const addons = readdirSync(ROOT).filter((f) => f.endsWith('.node'))
const built = Math.min(...addons.map((f) => statSync(join(ROOT, f)).mtimeMs), ...['index.js', 'index.d.ts'].map((f) => {
  try {
    return statSync(join(ROOT, f)).mtimeMs
  } catch {
    return 0
  }
}))
const sources = Math.max(newest(join(ROOT, 'crates')), ...['Cargo.toml', 'Cargo.lock'].map((f) => statSync(join(ROOT, f)).mtimeMs))
if (addons.length === 0 || sources > built) execSync('npm run build:native', { cwd: ROOT, stdio: 'inherit' })
else console.log(`the addon (${addons.join(', ')}) is newer than crates/, Cargo.toml and Cargo.lock: not rebuilt`)
