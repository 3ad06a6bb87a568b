// CSV files whose quoted values hold line breaks (reviews, comments,
// addresses) read by frame.readCsv in tiny blocks: the blocks start at true
// record starts, so every row is read once and its text verbatim, as
// csv-parse reads the same file; and where the sample showed no such value,
// a block cut inside one fails naming the file and line instead of reading
// wrong rows.
import test from 'ava'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { col, count, frame, sum, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-read-quoted-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

const q = (s: string) => `"${s.replace(/"/g, '""')}"`

/** Rows whose text holds 0–3 line breaks (CRLF in some, quotes inside), empty quoted values, a BOM, a quoted header, no final newline. */
function quotedFile(name: string, n: number, plainFirst = 0): string {
  const lines = [`\uFEFF${q('id')},${q('te,xt')},v`]
  for (let i = 0; i < n; i++) {
    const breaks = i < plainFirst ? 0 : i % 4
    const text = i % 9 === 5 ? '' : `${'line one\nsaid "hi", twice\r\n'.repeat(breaks)}row${i}`
    lines.push(`${i},${q(text)},${i * 3}`)
  }
  const path = join(dir, name)
  writeFileSync(path, lines.join('\n'))
  return path
}

test.serial('multi-line quoted values in tiny blocks read as csv-parse reads them: counts, sums and text verbatim', async (t) => {
  const path = quotedFile('reviews.csv', 300)
  const want = (parse(readFileSync(path), { columns: true, bom: true }) as Record<string, string>[]).map((r) => ({ id: Number(r.id), text: r['te,xt'], v: Number(r.v) }))
  t.is(want.length, 300)
  const f = frame.readCsv(path, { blocksize: 200 })
  t.true(f.npartitions > 20, `${f.npartitions} partitions`)
  t.deepEqual(f.schema, { id: 'int64', 'te,xt': 'utf8', v: 'int64' })
  const agg = (await client.compute(f.agg({ n: count(), s: sum('id'), v: sum('v') }))).toArray()[0]
  t.deepEqual({ n: Number(agg.n), s: Number(agg.s), v: Number(agg.v) }, { n: 300, s: want.reduce((a, r) => a + r.id, 0), v: want.reduce((a, r) => a + r.v, 0) })
  // An empty quoted value reads as null (nullValues' default ['']), as '' in csv-parse.
  const got = (await client.compute(f)).toArray().map((r) => ({ id: Number(r.id), text: r['te,xt'] ?? '', v: Number(r.v) }))
  t.deepEqual(got, want)
  // One value with CRLF and quotes inside, verbatim, from the batches as they come.
  const texts: string[] = []
  for await (const batch of client.iterate(f.filter(col('id').eq(7)).select('te,xt'))) texts.push(...batch.getChild('te,xt')!.toArray())
  t.deepEqual(texts, ['line one\nsaid "hi", twice\r\nline one\nsaid "hi", twice\r\nline one\nsaid "hi", twice\r\nrow7'])
})

test.serial('a line break past the sample fails its block naming the file and line, and quotedNewlines: true reads it right', async (t) => {
  // The first 200 rows hold no line break, and the sample sees only them.
  const path = quotedFile('late.csv', 260, 200)
  const text = readFileSync(path, 'latin1')
  const sampleBytes = text.indexOf('row200') - 100
  const e = await t.throwsAsync(client.compute(frame.readCsv(path, { blocksize: 300, sampleBytes }).agg({ n: count() })), { code: 'ERR_SPILLWAY_READ' })
  // The block cut inside the value says so, naming its line; the block after it, which starts inside the value, may fail first, pointing to the same option.
  t.regex(e!.message, /late\.csv: (line \d+ opens a quoted value that holds a line break|[\s\S]*starts inside a quoted value with a line break)[\s\S]*quotedNewlines: true/)
  const line = /line (\d+) opens/.exec(e!.message)
  // The line named starts a record whose value is cut: one with line breaks.
  if (line) t.regex(text.split('\n')[Number(line[1]) - 1], /^\d+,"line one$/)
  const f = frame.readCsv(path, { blocksize: 300, sampleBytes, quotedNewlines: true })
  const agg = (await client.compute(f.agg({ n: count(), s: sum('id') }))).toArray()[0]
  t.deepEqual({ n: Number(agg.n), s: Number(agg.s) }, { n: 260, s: (259 * 260) / 2 })
  t.throws(() => frame.readCsv(path, { quotedNewlines: 'yes' as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.quotedNewlines/ })
})
