// A frame's partitions through JavaScript, through the package and real
// workers: persist(frame) held on the workers (the files read once),
// mapBatches with a sync and an async function, toBag and bag.toFrame both
// ways, each checked against the rows written.
import test from 'ava'
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, col, count, frame, sum, type Client } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-batches-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

const N = 300
const rows = Array.from({ length: N }, (_, i) => ({ id: i, city: ['Oslo', 'Lima', 'Pune'][i % 3], amount: i % 11 === 0 ? null : (i % 40) / 4 }))

function csvFile(name: string): string {
  const path = join(dir, name)
  writeFileSync(path, `id,city,amount\n${rows.map((r) => `${r.id},${r.city},${r.amount ?? ''}`).join('\n')}\n`)
  return path
}

test('persist(frame): partitions held on the workers; two computes read them, not the file', async (t) => {
  const path = csvFile('persist.csv')
  const f = frame.readCsv(path, { blocksize: 1500 })
  t.true(f.npartitions > 2)
  const kept = await client.persist(f.filter(col('amount').isNotNull()))
  const held = async () => Object.values(await client.whoHas()).filter((ws) => ws.length > 0).length
  await until(async () => (await held()) >= kept.npartitions, 30_000, 'partitions held')
  // The file is gone: whatever is computed now comes from what the workers hold.
  unlinkSync(path)
  const a = await client.compute(kept)
  const b = await client.compute(kept.groupBy('city').agg({ n: count(), total: sum('amount') }))
  const want = rows.filter((r) => r.amount !== null)
  t.is(a.numRows, want.length)
  t.deepEqual([...a.getChild('id')!].map(Number), want.map((r) => r.id))
  const got = Object.fromEntries([...b].map((r) => [r.city, [Number(r.n), r.total]]))
  for (const city of ['Oslo', 'Lima', 'Pune']) {
    const mine = want.filter((r) => r.city === city)
    t.deepEqual(got[city], [mine.length, mine.reduce((s, r) => s + r.amount!, 0)])
  }
  // The computes did not let go of what persist holds; release does.
  t.is((await client.compute(kept)).numRows, want.length)
  kept.release()
  await until(async () => Object.keys(await client.whoHas()).length === 0, 20_000, 'persisted partitions let go of')
})

test('mapBatches: a sync function and an async one, each over every partition as an apache-arrow Table', async (t) => {
  const f = frame.readCsv(csvFile('map.csv'), { blocksize: 1500 })
  // Self-contained functions: the apache-arrow module comes as the second argument.
  const doubled = f.mapBatches(
    (table: any, arrow: any) => arrow.tableFromArrays({ id: table.getChild('id').toArray(), twice: Float64Array.from(table.getChild('amount').toArray(), (x: number) => 2 * x) }),
    { schema: { id: 'int64', twice: 'float64' } },
  )
  t.deepEqual(doubled.schema, { id: 'int64', twice: 'float64' })
  // The schema given is known before anything runs: later steps are checked against it.
  const big = await client.compute(doubled.filter(col('twice').gt(10)))
  const want = rows.filter((r) => r.amount !== null && 2 * r.amount > 10)
  t.deepEqual([...big.getChild('id')!].map(Number), want.map((r) => r.id))
  t.deepEqual([...big.getChild('twice')!], want.map((r) => 2 * r.amount!))

  const slow = f.mapBatches(async (table: any) => {
    await new Promise((r) => setTimeout(r, 5))
    return table.select(['city', 'id'])
  })
  const out = await client.compute(slow)
  t.deepEqual(out.schema.fields.map((x) => x.name), ['city', 'id'])
  t.deepEqual([...out.getChild('city')!], rows.map((r) => r.city))
  // Without a schema the columns are known only when it runs: a step naming one says so.
  const e = t.throws(() => slow.filter(col('id').gt(1)))
  t.is((e as any).code, 'ERR_SPILLWAY_COLUMN_NOT_FOUND')
  t.regex(e!.message, /no column "id"; the columns are not known before it runs; give mapBatches\(fn, \{ schema \}\)/)
})

test('mapBatches: a result that is no Table, or not of the schema given, fails by name', async (t) => {
  const f = frame.readCsv(csvFile('bad.csv'))
  // Refused by tsc too; a JavaScript user gets the task's error.
  const notATable: any = function notATable() {
    return [1, 2]
  }
  const e1 = await t.throwsAsync(client.compute(f.mapBatches(notATable)))
  t.is((e1 as any).code, 'ERR_SPILLWAY_FRAME')
  t.regex(e1!.message, /mapBatches: the function notATable returned Array for partition 0, not an apache-arrow Table/)
  const e2 = await t.throwsAsync(client.compute(f.mapBatches((x: any) => x.select(['id']), { schema: { id: 'utf8' } })))
  t.regex(e2!.message, /has columns \{ id: int64 \}, not those of its schema \{ id: utf8 \}/)
  t.throws(() => f.mapBatches((x: any) => x, { schema: { id: 'int65' } }), { message: /options\.schema\.id.*int65/ })
})

test('toBag and bag.toFrame: rows as plain objects and back, with a schema and inferred', async (t) => {
  const f = frame.readCsv(csvFile('round.csv'), { blocksize: 1500 })
  const items = await client.compute(f.toBag())
  t.deepEqual(items, rows)
  t.is(typeof items[0].id, 'number')
  const big = await client.compute(f.toBag({ int64: 'bigint' }).take(2))
  t.deepEqual(big.map((r: any) => r.id), [0n, 1n])

  const b = bag.fromSequence(rows, { npartitions: 4 })
  const given = b.toFrame({ id: 'int64', city: 'utf8', amount: 'float64' })
  t.deepEqual(given.schema, { id: 'int64', city: 'utf8', amount: 'float64' })
  const byCity = await client.compute(given.groupBy('city').agg({ n: count('amount') }))
  t.deepEqual(Object.fromEntries([...byCity].map((r) => [r.city, Number(r.n)])), Object.fromEntries(['Oslo', 'Lima', 'Pune'].map((c) => [c, rows.filter((r) => r.city === c && r.amount !== null).length])))
  // The round trip: items → frame → items.
  t.deepEqual(await client.compute(given.toBag()), rows)

  // Inferred: numbers are float64, so partitions agree whatever their values.
  const inferred = await client.compute(b.toFrame())
  t.deepEqual(inferred.schema.fields.map((x) => `${x.name}: ${x.type}`), ['id: Float64', 'city: Utf8', 'amount: Float64'])
  t.deepEqual([...inferred.getChild('amount')!], rows.map((r) => r.amount))

  // A value that is not of its column's type names column, item and partition.
  const e = await t.throwsAsync(client.compute(bag.fromSequence([{ id: 1 }, { id: 'two' }], { npartitions: 1 }).toFrame({ id: 'int64' })))
  t.regex(e!.message, /toFrame: column "id", item 1 of partition 0 holds two \(string\), which is not a int64/)
  // Partitions that infer differently fail the compute, naming both.
  const e3 = await t.throwsAsync(client.compute(bag.fromSequence([{ x: 1 }, { x: 'a' }], { npartitions: 2 }).toFrame()))
  t.regex(e3!.message, /the partitions' columns differ: \{ x: utf8 \} against the first's \{ x: float64 \}; give mapBatches or toFrame a schema/)
})

test('toBag of an int64 past 2^53 needs { int64: "bigint" }', async (t) => {
  const path = join(dir, 'huge.csv')
  writeFileSync(path, 'n\n1\n9007199254740993\n')
  const f = frame.readCsv(path)
  const e = await t.throwsAsync(client.compute(f.toBag()))
  t.regex(e!.message, /toBag: column "n", row 1 of partition 0 holds 9007199254740993, past Number.MAX_SAFE_INTEGER; use toBag\(\{ int64: 'bigint' \}\)/)
  t.deepEqual(await client.compute(f.toBag({ int64: 'bigint' })), [{ n: 1n }, { n: 9007199254740993n }])
})
