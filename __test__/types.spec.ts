// The types a strict TypeScript user gets from the published entry:
// __test__/types/typed.mts is type-checked against dist/'s declarations.
// Its `@ts-expect-error` lines must each be refused and everything else
// accepted, so a type that loosens or tightens fails here.
import test from 'ava'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ERROR_CODES } from 'spillway'

import { tsc } from './tsc-helpers'

const ROOT = join(__dirname, '..')

test('a strict user file type-checks: Future<T>, submit, map, gather, wait, scatter, bags, taskModule, error codes', async (t) => {
  const r = await tsc(join(__dirname, 'types', 'tsconfig.json'))
  t.true(r.ok, r.output)
})

test('the check fails when a refused line is accepted (an @ts-expect-error with nothing to expect)', async (t) => {
  // A copy beside the original (so its imports resolve the same), with one
  // refused call made right: tsc must now report the unused expectation.
  const dir = mkdtempSync(join(__dirname, 'types', 'tmp-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(join(__dirname, 'types', 'tsconfig.json'), join(dir, 'tsconfig.json'))
  const src = readFileSync(join(__dirname, 'types', 'typed.mts'), 'utf8').replaceAll("'../fixtures/", "'../../fixtures/")
  const broken = src.replace('client.submit((a: number, b: number) => a + b, [1, \'two\'])', 'client.submit((a: number, b: number) => a + b, [1, 2])')
  t.not(broken, src)
  writeFileSync(join(dir, 'typed.mts'), broken)
  const r = await tsc(join(dir, 'tsconfig.json'))
  t.false(r.ok)
  t.regex(r.output, /TS2578/) // Unused '@ts-expect-error' directive.
})

test("every error code spillway's source raises is in ERROR_CODES, the union SpillwayError.code is typed with", (t) => {
  const { execFileSync } = require('node:child_process') as typeof import('node:child_process')
  const found = execFileSync('grep', ['-rhoE', 'ERR_SPILLWAY_[A-Z_0-9]+', join(ROOT, 'src'), join(ROOT, 'crates')], { encoding: 'utf8' })
  const used = [...new Set(found.split('\n').filter(Boolean))].sort()
  t.deepEqual(
    used.filter((c) => !(ERROR_CODES as readonly string[]).includes(c)),
    [],
  )
  t.true(used.length > 30)
})
