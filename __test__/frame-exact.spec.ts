// Values that used to come out silently wrong now come out exact or as a
// coded error saying what to do: int64 arithmetic past its range (DuckDB's
// "Overflow in addition of INT64"), CSV files that are Latin-1 or hold bytes
// that are not UTF-8, and bags of nested values turned into frames. Real
// files, real workers, answers written out by hand.
import test from 'ava'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, col, count, frame, lit, nUnique, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-exact-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n

test.serial('int64 plus, minus and multiplyBy are exact up to the bounds and an overflow is a coded error naming the values', async (t) => {
  const p = join(dir, 'big.csv')
  writeFileSync(p, `a,b\n${MAX - 1n},1\n${MIN + 1n},-1\n3,4\n`)
  const f = frame.readCsv(p, { schema: { a: 'int64', b: 'int64' } })
  const ok = await client.compute(f.withColumns({ s: col('a').plus(col('b')), d: col('a').minus(col('a')), m: col('b').multiplyBy(-1) }))
  t.deepEqual(ok.getChild('s')!.toArray(), BigInt64Array.from([MAX, MIN, 7n]))
  t.deepEqual(ok.getChild('m')!.toArray(), BigInt64Array.from([-1n, 1n, -4n]))
  for (const [e, values] of [
    [col('a').plus(col('b')).plus(1), `addition of int64 ${MAX} + 1 (row 0 of the partition)`],
    [col('a').minus(1).minus(1), `subtraction of int64 ${MIN} - 1 (row 1 of the partition)`],
    [col('a').multiplyBy(2), `multiplication of int64 ${MAX - 1n} * 2 (row 0 of the partition)`],
  ] as const) {
    const err = await t.throwsAsync(client.compute(f.withColumns({ x: e })), { code: 'ERR_SPILLWAY_FRAME' })
    t.true(err!.message.includes(`integer overflow in ${e.toString()}: ${values} passes int64's range`), err!.message)
    t.true(err!.message.includes("cast to float64 first (e.g. col(...).cast('float64')) for an approximate result"), err!.message)
  }
  // What the message says to do works: float64 arithmetic, approximate past 2^53.
  const approx = await client.compute(f.select(col('a').cast('float64').plus(col('b')).plus(1).alias('x')))
  t.deepEqual([...approx.getChild('x')!.toArray()], [2 ** 63, -(2 ** 63), 8])
})

test.serial('an int64 column against an integral JS number past 2^53 compares exactly, as against its bigint', async (t) => {
  const p = join(dir, 'past53.csv')
  writeFileSync(p, 'v\n9007199254740992\n9007199254740993\n-9007199254740993\n')
  const f = frame.readCsv(p)
  t.is(f.schema.v, 'int64')
  const kept = async (e: ReturnType<typeof col>) => [...(await client.compute(f.filter(e))).getChild('v')!.toArray()].map(String)
  t.deepEqual(await kept(col('v').eq(9007199254740992)), ['9007199254740992'])
  t.deepEqual(await kept(col('v').gt(9007199254740992)), ['9007199254740993'])
  t.deepEqual(await kept(col('v').gtEq(9007199254740992)), ['9007199254740992', '9007199254740993'])
  t.deepEqual(await kept(col('v').lt(-9007199254740992)), ['-9007199254740993'])
  t.deepEqual(await kept(col('v').neq(9007199254740992)), ['9007199254740993', '-9007199254740993'])
  // The same as the bigint literal, and a fraction still compares as float64 (SQL's rule).
  t.deepEqual(await kept(col('v').gt(9007199254740992n)), await kept(col('v').gt(9007199254740992)))
  t.deepEqual(await kept(col('v').gt(2.5)), ['9007199254740992', '9007199254740993'])
})

test.serial('-0.0 and 0.0 are one value in filters, groups, distinct, nUnique, joins and sorts, and every NaN one group, as DuckDB; max is NaN where a NaN is', async (t) => {
  const p = join(dir, 'zeros.csv')
  writeFileSync(p, 'y,i\n-0.0,0\n0.0,1\nNaN,2\n1.5,3\n-0.0,4\nNaN,5\n')
  const f = frame.readCsv(p, { schema: { y: 'float64', i: 'int64' } })
  const ids = async (x: ReturnType<typeof frame.readCsv>) => [...(await client.compute(x)).getChild('i')!.toArray()].map(Number)
  t.deepEqual(await ids(f.filter(col('y').eq(0))), [0, 1, 4])
  t.deepEqual(await ids(f.filter(col('y').lt(0))), [])
  const groups = await client.compute(f.groupBy('y').agg({ n: count() }))
  const byY = new Map([...groups.getChild('y')!.toArray()].map((y, k) => [String(y), Number(groups.getChild('n')!.get(k))]))
  t.deepEqual([...byY.entries()].sort(), [['0', 3], ['1.5', 1], ['NaN', 2]].sort() as [string, number][])
  t.is((await client.compute(f.select('y').distinct())).numRows, 3)
  t.is(await client.compute(f.nUnique('y')), 3)
  const other = frame.readCsv(p, { schema: { y: 'float64', i: 'int64' } }).filter(col('i').eq(1)).select(col('y').alias('k'), col('i').alias('j'))
  const joined = await client.compute(f.join(other, { leftOn: 'y', rightOn: 'k' }))
  t.deepEqual([...joined.getChild('i')!.toArray()].map(Number).sort(), [0, 1, 4], '-0.0 rows match the 0.0 key')
  t.deepEqual(await ids(f.sortBy('y')), [0, 1, 4, 3, 2, 5], 'the zeros tie in input order, NaN last')
  t.true(Number.isNaN(await client.compute(f.max('y'))))
})

test.serial('a float64 literal reaches the core exactly (1e15 + 0.5 was read one ulp off); a Parquet filter naming no column reads as over CSV', async (t) => {
  const p = join(dir, 'lit.csv')
  writeFileSync(p, 'a\n1000000000000000.5\n2\n')
  const f = frame.readCsv(p, { schema: { a: 'float64' } })
  const got = await client.compute(f.select(lit(1000000000000000.5).alias('e'), col('a').eq(1000000000000000.5).alias('same'), col('a').plus(1000000000000000.5).alias('s')))
  t.deepEqual([...got.getChild('e')!.toArray()], [1000000000000000.5, 1000000000000000.5])
  t.deepEqual([...got.getChild('same')!.toArray()], [true, false])
  t.deepEqual([...got.getChild('s')!.toArray()], [2000000000000001, 1000000000000002.5])
  await client.compute(f.toParquet(join(dir, 'lit-*.parquet')))
  const parquet = frame.readParquet(join(dir, 'lit-*.parquet'))
  t.is((await client.compute(parquet.filter(lit(1).eq(0)))).numRows, 0)
  t.is((await client.compute(parquet.filter(lit(1).eq(1)).select('a'))).numRows, 2)
})

test.serial('a Latin-1 CSV reads exactly with encoding latin1; without it the first bad byte is a coded error naming file, line and column', async (t) => {
  const p = join(dir, 'latin1.csv')
  // é is 0xE9 and ü 0xFC in Latin-1; blocks of 20 bytes cut the file mid-line.
  writeFileSync(p, Buffer.concat([Buffer.from('id,name\n1,caf'), Buffer.from([0xe9]), Buffer.from('\n2,M'), Buffer.from([0xfc]), Buffer.from('ller\n3,plain\n')]))
  const f = frame.readCsv(p, { encoding: 'latin1', blocksize: 20 })
  t.true(f.npartitions > 1)
  const rows = (await client.compute(f)).toArray().map((r) => [r.id, r.name])
  t.deepEqual(rows, [[1n, 'café'], [2n, 'Müller'], [3n, 'plain']])
  const e = t.throws(() => frame.readCsv(p), { code: 'ERR_SPILLWAY_READ' })
  t.true(e!.message.includes(`${p}: line 2, column 2 "name": byte 13 (0xE9) is not valid UTF-8; if the file is Latin-1 (ISO-8859-1), read it with { encoding: 'latin1' }`), e!.message)
  // Past the sample (types given, so nothing is sampled to infer), the block's reader names row, line and column.
  const late = await t.throwsAsync(client.compute(frame.readCsv(p, { schema: { id: 'int64', name: 'utf8' }, sampleBytes: 8 })), { code: 'ERR_SPILLWAY_READ' })
  t.regex(late!.message, /row 1 \(line 2\), column "name": bytes that are not valid UTF-8; if the file is Latin-1 \(ISO-8859-1\), read it with \{ encoding: 'latin1' \}/)
  t.throws(() => frame.readCsv(p, { encoding: 'utf16' as any }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /options\.encoding[\s\S]*utf16[\s\S]*'utf8' or 'latin1'/ })
})

test.serial('bag.toFrame of arrays and nested objects makes list and struct columns, unified across items; a conflict names the field and both types', async (t) => {
  const items = [
    { id: 1, tags: ['a', 'b'], pos: { x: 1.5, y: null }, when: new Date(0) },
    { id: 2, tags: [], pos: { x: 2, y: 3n, z: true } },
    { id: 3, tags: null, pos: null, when: null },
  ]
  const f = bag.fromSequence(items, { npartitions: 1 }).toFrame()
  const table = await client.compute(f)
  t.deepEqual(table.schema.fields.map((x) => `${x.name}: ${x.type}`), ['id: Float64', 'tags: List<Utf8>', 'pos: Struct<{x:Float64, y:Int64, z:Bool}>', 'when: Timestamp<MILLISECOND>'])
  t.deepEqual(table.toArray().map((r) => [r.id, r.tags && [...r.tags], r.pos && { ...r.pos.toJSON() }]), [
    [1, ['a', 'b'], { x: 1.5, y: null, z: null }],
    [2, [], { x: 2, y: 3n, z: true }],
    [3, null, null],
  ])
  // And back to items: the nested values as they went in (a missing key now null).
  const back = await client.compute(f.toBag({ int64: 'bigint' }))
  t.deepEqual(back, [
    { id: 1, tags: ['a', 'b'], pos: { x: 1.5, y: null, z: null }, when: 0 },
    { id: 2, tags: [], pos: { x: 2, y: 3n, z: true }, when: null },
    { id: 3, tags: null, pos: null, when: null },
  ])
  for (const [bad, path, types] of [
    [[{ v: [1, 2] }, { v: [3, 'x'] }], 'v[]', 'is a utf8 where earlier items hold a float64'],
    [[{ v: { a: { b: 1 } } }, { v: { a: { b: [1] } } }], 'v.a.b', 'is a list<float64> where earlier items hold a float64'],
    [[{ v: { a: 1 } }, { v: 'x' }], 'v', 'is a utf8 where earlier items hold a struct<"a": float64>'],
  ] as const) {
    const e = await t.throwsAsync(client.compute(bag.fromSequence(bad as any[], { npartitions: 1 }).toFrame()), { code: 'ERR_SPILLWAY_FRAME' })
    t.true(e!.message.includes(`toFrame: column ${JSON.stringify(path)}, item 1 of partition 0 ${types}; give toFrame a schema, or make the values agree`), e!.message)
  }
})
