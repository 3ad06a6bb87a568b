// Typed frames as a strict TypeScript user gets them from the published
// entry: __test__/types/frames.mts is type-checked against dist/'s
// declarations; its `@ts-expect-error` lines (wrong column names, wrong row
// types) must each be refused and everything else accepted.
import test from 'ava'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { tsc } from './tsc-helpers'

test('typed frames: column names and result rows are checked by tsc, untyped frames compile as before', async (t) => {
  const r = await tsc(join(__dirname, 'types', 'frames.tsconfig.json'))
  t.true(r.ok, r.output)
})

test('the check fails when a wrong column name is accepted (an @ts-expect-error with nothing to expect)', async (t) => {
  const dir = mkdtempSync(join(__dirname, 'types', 'tmp-frames-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync(join(__dirname, 'types', 'frames.tsconfig.json'), join(dir, 'frames.tsconfig.json'))
  const src = readFileSync(join(__dirname, 'types', 'frames.mts'), 'utf8')
  const broken = src.replace("sales.filter(col('amnt').gt(1))", "sales.filter(col('amount').gt(1))")
  t.not(broken, src)
  writeFileSync(join(dir, 'frames.mts'), broken)
  const r = await tsc(join(dir, 'frames.tsconfig.json'))
  t.false(r.ok)
  t.regex(r.output, /frames\.mts\(\d+,\d+\): error TS2578/) // Unused '@ts-expect-error' directive.
})

test('a wrong column of a readCsv typed by its schema is refused by tsc naming the column and the columns there are', async (t) => {
  const dir = mkdtempSync(join(__dirname, 'types', 'tmp-read-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync(join(__dirname, 'types', 'frames.tsconfig.json'), join(dir, 'frames.tsconfig.json'))
  const src = [
    "import { col, frame, sum } from 'spillway'",
    "const trips = frame.readCsv('/d/*.csv', { schema: { id: 'int64', name: 'utf8', price: 'float64' } })",
    "trips.filter(col('prise').gt(1))",
    "trips.groupBy('name').agg({ total: sum('cost') })",
    "frame.readCsv('/d/*.csv', { schema: { id: 'int46' } })",
  ].join('\n')
  writeFileSync(join(dir, 'frames.mts'), src + '\n')
  const r = await tsc(join(dir, 'frames.tsconfig.json'))
  t.false(r.ok)
  t.regex(r.output, /frames\.mts\(3,\d+\): error TS2345[\s\S]*'"prise"' is not assignable to type '"id" \| "name" \| "price"'/)
  t.regex(r.output, /frames\.mts\(4,\d+\): error TS2\d+[\s\S]*"cost"[\s\S]*"id" \| "name" \| "price"/)
  t.regex(r.output, /frames\.mts\(5,\d+\): error TS\d+: Type '"int46"' is not assignable to type 'CsvType'/)
})
