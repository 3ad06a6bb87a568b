#!/usr/bin/env node
// Packs what a release publishes, without publishing, through @napi-rs/cli's
// own release steps: `napi artifacts` moves each built binary
// (ARTIFACTS/spillway.<platform>.node) into its platform package and
// `napi pre-publish --skip-optional-publish` checks every package and sets the
// main package's optionalDependencies. Everything happens in a staging copy,
// so the checkout's npm/ and package.json stay as committed. Prints the
// tarballs' paths, main package first, one per line.
//
//   node scripts/pack-release.js [--artifacts DIR] [--out DIR]
//
// The release workflow runs this with all five binaries; this machine builds
// linux-x64-gnu only. napi's steps refuse a configured target without its
// binary, so they run over the targets that have one, and the main package
// still names every platform package (what the workflow publishes).
'use strict'
const { execFileSync } = require('node:child_process')
const { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { parseArgs } = require('node:util')
const { NapiCli, parseTriple } = require('@napi-rs/cli')

const root = resolve(__dirname, '..')

async function main() {
  const { values } = parseArgs({
    options: {
      artifacts: { type: 'string', default: join(root, 'target', 'release-artifacts') },
      out: { type: 'string', default: join(root, 'target', 'release-packages') },
    },
  })
  const artifacts = resolve(values.artifacts)
  const out = resolve(values.out)
  mkdirSync(out, { recursive: true })
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const { binaryName, targets } = pkg.napi
  const all = targets.map(parseTriple)
  const built = all.filter((t) => existsSync(join(artifacts, `${binaryName}.${t.platformArchABI}.node`)))
  if (built.length === 0) {
    throw new Error(`no binary in ${artifacts}: expected ${all.map((t) => `${binaryName}.${t.platformArchABI}.node`).join(', ')} (npm run build:linux-x64-gnu builds one)`)
  }

  const stage = mkdtempSync(join(tmpdir(), 'spillway-pack-'))
  try {
    for (const f of ['bin', 'dist', 'index.js', 'index.d.ts', 'README.md', 'LICENSE', 'npm']) cpSync(join(root, f), join(stage, f), { recursive: true })
    const staged = {
      ...pkg,
      files: ['bin', 'dist', 'index.js', 'index.d.ts'],
      // No install-time script: an installed spillway takes its binary from its platform package.
      scripts: undefined,
      devDependencies: undefined,
      // The benchmarks' Node codec peers are the repository's, not the users'; pre-publish adds the platform packages.
      optionalDependencies: {},
      napi: { ...pkg.napi, targets: built.map((t) => t.triple) },
    }
    writeFileSync(join(stage, 'package.json'), JSON.stringify(staged, null, 2) + '\n')
    const napi = new NapiCli()
    await napi.artifacts({ cwd: stage, outputDir: artifacts, npmDir: 'npm' })
    // The main package holds no binary; napi artifacts also drops one beside package.json.
    for (const t of built) rmSync(join(stage, `${binaryName}.${t.platformArchABI}.node`), { force: true })
    await napi.prePublish({ cwd: stage, npmDir: 'npm', skipOptionalPublish: true, ghRelease: false })

    const published = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'))
    for (const t of all) published.optionalDependencies[`${pkg.name}-${t.platformArchABI}`] ??= pkg.version
    published.napi = pkg.napi
    writeFileSync(join(stage, 'package.json'), JSON.stringify(published, null, 2) + '\n')

    const pack = (cwd) => execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd, encoding: 'utf8' }).trim().split('\n').pop()
    const tarballs = [pack(stage), ...built.map((t) => pack(join(stage, 'npm', t.platformArchABI)))]
    for (const t of tarballs) console.log(join(out, t))
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e)
  process.exit(1)
})
