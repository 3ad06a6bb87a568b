#!/usr/bin/env node
// `npm run build:test`: builds the addon (`npm run build:native`) only when a
// Rust source, manifest or the lock file is newer than the built addon, or
// there is none; and dist/ (`npm run build:ts`) only when a TypeScript
// source, an asset or tsconfig.json is newer than dist/index.js.
// `napi build` would find nothing to do itself, but the first build after a
// fresh one recompiles and links the addon crate regardless (napi sets an
// environment variable on a fresh build that its build script watches):
// two minutes of every `npm test` just after `npm install`. tsc has no such
// quirk, but takes 8 seconds to find nothing changed.
'use strict'
const { execSync } = require('node:child_process')
const { readdirSync, statSync } = require('node:fs')
const { join } = require('node:path')

const ROOT = join(__dirname, '..')

/** The newest modification time under `dir` of the files `pattern` names (0 for none). */
function newest(dir, pattern) {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) t = Math.max(t, newest(p, pattern))
    else if (pattern.test(e.name)) t = Math.max(t, statSync(p).mtimeMs)
  }
  return t
}
const mtime = (f) => {
  try {
    return statSync(join(ROOT, f)).mtimeMs
  } catch {
    return 0
  }
}

const addons = readdirSync(ROOT).filter((f) => f.endsWith('.node'))
const built = Math.min(...addons.map((f) => mtime(f)), mtime('index.js'), mtime('index.d.ts'))
const sources = Math.max(newest(join(ROOT, 'crates'), /\.(rs|toml)$/), mtime('Cargo.toml'), mtime('Cargo.lock'))
if (addons.length === 0 || sources > built) execSync('npm run build:native', { cwd: ROOT, stdio: 'inherit' })
else console.log(`the addon (${addons.join(', ')}) is newer than crates/, Cargo.toml and Cargo.lock: not rebuilt`)

// index.d.ts is napi's, and src/ imports it: a new addon may change dist/.
const ts = Math.max(newest(join(ROOT, 'src'), /./), mtime('tsconfig.json'), mtime('index.d.ts'), mtime('index.js'), mtime('package.json'))
if (ts > mtime('dist/index.js') || mtime('dist/index.js') === 0) execSync('npm run build:ts', { cwd: ROOT, stdio: 'inherit' })
else console.log('dist/ is newer than src/, tsconfig.json and the addon: not rebuilt')
