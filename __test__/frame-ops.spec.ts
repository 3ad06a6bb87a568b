// Frame expressions, aggregates and whole-frame operations through the
// package and real workers, each checked against the plain-JS answer on
// the same rows: arithmetic, fillNull, cast, the string and date functions,
// split + explode, nUnique/first/last/std/var, distinct, head, tail, count,
// describe, and readText (gzip included) with the word count of DESIGN.md.
import test from 'ava'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { col, count, first, frame, last, lit, mean, nUnique, std, sum, var as variance, when, type Client, type FrameTable } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-ops-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

interface Row {
  name: string | null
  k: number | null
  x: number | null
  d: string | null
}

const NAMES = ['Ada Lovelace', 'émile zola', 'Zoë', 'ÅSA björk', 'x', '']
function rowsOf(seed: number, n: number): Row[] {
  let s = seed
  const next = (m: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31), Math.floor(s / 2 ** 12) % m)
  return Array.from({ length: n }, () => ({
    name: next(7) === 0 ? null : NAMES[next(NAMES.length)],
    k: next(6) === 0 ? null : next(5) - 1,
    // Quarters: sums and means are exact whatever the order.
    x: next(5) === 0 ? null : next(200) / 4 - 10,
    d: next(8) === 0 ? null : `20${10 + next(15)}-${String(1 + next(12)).padStart(2, '0')}-${String(1 + next(28)).padStart(2, '0')}`,
  }))
}

const cell = (v: string | number | null) => (v === null ? 'NA' : typeof v === 'string' ? `"${v}"` : String(v))
function writeCsv(path: string, rows: Row[]): void {
  writeFileSync(path, ['name,k,x,d', ...rows.map((r) => [cell(r.name), cell(r.k), cell(r.x), cell(r.d)].join(','))].join('\n') + '\n')
}

/** Three files in small blocks (one with a header only: an empty partition), rows in file order. */
function files(sub: string): { rows: Row[]; f: ReturnType<typeof frame.readCsv> } {
  mkdirSync(join(dir, sub))
  const a = rowsOf(1, 300)
  const c = rowsOf(3, 150)
  writeCsv(join(dir, sub, 'a.csv'), a)
  writeCsv(join(dir, sub, 'b.csv'), [])
  writeCsv(join(dir, sub, 'c.csv'), c)
  const f = frame.readCsv(join(dir, sub, '*.csv'), { blocksize: 2000, nullValues: ['NA'], schema: { name: 'utf8', k: 'int64', x: 'float64', d: 'date32' } })
  return { rows: [...a, ...c], f }
}

const plain = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v)
const rowsOfTable = (t: FrameTable) => t.toArray().map((r) => Object.fromEntries(Object.entries(r.toJSON()).map(([k, v]) => [k, plain(v)])))
const chars = (s: string) => [...s]
const sorted = (m: Map<unknown, unknown>) => [...m].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1))

test.serial('arithmetic, fillNull, cast, string and date functions: types known up front, values as plain JS computes them', async (t) => {
  const { rows, f } = files('exprs')
  const g = f.withColumns({
    k2: col('k').multiplyBy(2).plus(1),
    half: col('k').divideBy(lit(2)),
    diff: col('x').minus(col('k')),
    kf: col('k').fillNull(-1),
    ks: col('k').cast('utf8'),
    has: col('name').str.contains(/^[a-zé]+\b/i),
    sub: col('name').str.contains('ö'),
    ada: col('name').str.startsWith('Ada'),
    lo: col('name').str.lower(),
    up: col('name').str.upper(),
    len: col('name').str.len(),
    mid: col('name').str.slice(1, 3),
    end: col('name').str.slice(-2),
    y: col('d').dt.year(),
    m: col('d').dt.month(),
    day: col('d').dt.day(),
    wd: col('d').dt.weekday(),
  }).drop('x').rename({ name: 'who' })
  t.deepEqual(g.schema, { who: 'utf8', k: 'int64', d: 'date32', k2: 'int64', half: 'float64', diff: 'float64', kf: 'int64', ks: 'utf8', has: 'bool', sub: 'bool', ada: 'bool', lo: 'utf8', up: 'utf8', len: 'int64', mid: 'utf8', end: 'utf8', y: 'int32', m: 'int32', day: 'int32', wd: 'int32' })
  const got = rowsOfTable(await client.compute(g))
  const s = (r: Row, fn: (v: string) => unknown) => (r.name === null ? null : fn(r.name))
  const date = (r: Row) => (r.d === null ? null : new Date(`${r.d}T00:00:00Z`))
  const want = rows.map((r) => ({
    who: r.name,
    k: r.k,
    d: date(r)?.getTime() ?? null,
    k2: r.k === null ? null : r.k * 2 + 1,
    half: r.k === null ? null : r.k / 2,
    diff: r.x === null || r.k === null ? null : r.x - r.k,
    kf: r.k ?? -1,
    ks: r.k === null ? null : String(r.k),
    has: s(r, (v) => /^[a-zé]+\b/i.test(v)),
    sub: s(r, (v) => v.includes('ö')),
    ada: s(r, (v) => v.startsWith('Ada')),
    lo: s(r, (v) => v.toLowerCase()),
    up: s(r, (v) => v.toUpperCase()),
    len: s(r, (v) => chars(v).length),
    mid: s(r, (v) => chars(v).slice(1, 4).join('')),
    end: s(r, (v) => chars(v).slice(-2).join('')),
    y: date(r)?.getUTCFullYear() ?? null,
    m: date(r) ? date(r)!.getUTCMonth() + 1 : null,
    day: date(r)?.getUTCDate() ?? null,
    wd: date(r) ? date(r)!.getUTCDay() || 7 : null,
  }))
  t.deepEqual(got, want)
})

test.serial('when/then/otherwise, isIn, isBetween, abs, str.endsWith and str.like: the SQL answers, nulls included; wrong types refused when built', async (t) => {
  const p = join(dir, 'analytic.csv')
  writeFileSync(p, 'id,qty,price,name\n1,5,-2.5,LARGE BRASS\n2,12,0,small tin\n3,,7.25,BRASS%\n4,30,-0.0,x_y\n5,-3,,\n')
  const f = frame.readCsv(p, { schema: { id: 'int64', qty: 'int64', price: 'float64', name: 'utf8' } })
  const out = await client.compute(
    f.select(
      col('id'),
      when(col('qty').gt(10)).then('bulk').when(col('qty').gt(0)).then('some').otherwise('none').alias('size'),
      when(col('qty').gt(10)).then(col('price')).alias('bulkPrice'),
      col('qty').isIn([5, 30, null]).alias('in'),
      col('qty').isBetween(0, 12).alias('between'),
      col('qty').abs().alias('absQty'),
      col('price').abs().alias('absPrice'),
      col('name').str.endsWith('BRASS').alias('ends'),
      col('name').str.like('%BRASS').alias('like'),
      col('name').str.like('x_y').alias('likeLiteral'),
      col('name').str.like('%a_l%').alias('likeOne'),
    ),
  )
  const rows = out.toArray().map((r: any) => ({ ...r.toJSON() }))
  // A null condition is not true: qty null takes otherwise; IN with a null in the list is null where nothing matches.
  t.deepEqual(rows.map((r) => r.size), ['some', 'bulk', 'none', 'bulk', 'none'])
  t.deepEqual(rows.map((r) => r.bulkPrice), [null, 0, null, -0, null])
  t.deepEqual(rows.map((r) => r.in), [true, null, null, true, null])
  t.deepEqual(rows.map((r) => r.between), [true, true, null, false, false])
  t.deepEqual(rows.map((r) => r.absQty), [5n, 12n, null, 30n, 3n])
  t.deepEqual(rows.map((r) => Object.is(r.absPrice, -0) ? 'negative zero' : r.absPrice), [2.5, 0, 7.25, 0, null])
  t.deepEqual(rows.map((r) => r.ends), [true, false, false, false, null])
  t.deepEqual(rows.map((r) => r.like), [true, false, false, false, null])
  t.deepEqual(rows.map((r) => r.likeLiteral), [false, false, false, true, null])
  t.deepEqual(rows.map((r) => r.likeOne), [false, true, false, false, null])
  t.is((await client.compute(f.filter(col('name').str.like('BRASS%')))).numRows, 1)
  t.is((await client.compute(f.filter(col('qty').isIn([])))).numRows, 0)
  t.throws(() => f.select(when(col('qty')).then(1).alias('x')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /a boolean condition/ })
  t.throws(() => f.select(when(col('qty').gt(1)).then(col('name')).otherwise(col('qty')).alias('x')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /otherwise of the then branch's kind/ })
  t.throws(() => f.select(col('name').abs().alias('x')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
})

test.serial('modulo and round: as SQL computes them (the dividend\'s sign, halves away from zero), integers kept, an integer % 0 a coded error naming it', async (t) => {
  const { rows, f } = files('mod-round')
  const g = f.select(col('k').modulo(3).alias('km'), col('x').modulo(4).alias('xm'), col('x').round(0).alias('x0'), col('x').multiplyBy(1.25).round(1).alias('x1'), col('k').multiplyBy(1250).round(-2).alias('kr'))
  t.deepEqual(g.schema, { km: 'int64', xm: 'float64', x0: 'float64', x1: 'float64', kr: 'int64' })
  // Halves away from zero at the last place kept (every x is a quarter, so x * 1.25 is exact in binary).
  const away = (v: number, d: number) => (Math.sign(v) * Math.round(Math.abs(v) * 10 ** d)) / 10 ** d
  const want = rows.map((r) => ({
    km: r.k === null ? null : r.k % 3,
    xm: r.x === null ? null : r.x % 4,
    x0: r.x === null ? null : away(r.x, 0),
    x1: r.x === null ? null : away(r.x * 1.25, 1),
    kr: r.k === null ? null : Math.sign(r.k) * Math.round(Math.abs(r.k * 1250) / 100) * 100,
  }))
  const got = rowsOfTable(await client.compute(g)).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === 0 ? 0 : v])))
  t.deepEqual(got, want.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === 0 ? 0 : v]))))
  const err = await t.throwsAsync(client.compute(f.select(col('k').modulo(col('k').minus(col('k'))).alias('z'))))
  t.is((err as any).code, 'ERR_SPILLWAY_FRAME', String(err))
  t.regex(err!.message, /division by zero in col\("k"\)\.modulo\(col\("k"\)\.minus\(col\("k"\)\)\): int64 -?\d+ % 0/)
  t.throws(() => col('x').round(1.5), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /decimals/ })
  t.throws(() => f.select(col('name').round(1).alias('r')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /a number to round/ })
})

test.serial('dates compared with ISO strings and Dates, as DuckDB reads them: a date at midnight is that day, a Date with a time compares the day as a timestamp', async (t) => {
  const { rows, f } = files('date-lits')
  const day = (r: Row) => (r.d === null ? null : Date.parse(`${r.d}T00:00:00Z`))
  const ids = async (g: ReturnType<typeof frame.readCsv>) => rowsOfTable(await client.compute(g.select('name', 'd', 'x'))).length
  const count = (keep: (ms: number) => boolean) => rows.filter((r) => day(r) !== null && keep(day(r)!)).length
  const cut = Date.UTC(2018, 5, 1)
  t.is(await ids(f.filter(col('d').lt('2018-06-01'))), count((ms) => ms < cut))
  t.is(await ids(f.filter(col('d').gtEq(lit(new Date(cut))))), count((ms) => ms >= cut))
  // Noon of 2018-06-01: that day (its midnight) is before it.
  t.is(await ids(f.filter(col('d').ltEq(lit(new Date(cut + 12 * 3600_000))))), count((ms) => ms <= cut))
  t.is(await ids(f.filter(col('d').gt(lit(new Date(cut + 12 * 3600_000))))), count((ms) => ms > cut))
  t.is(await ids(f.filter(col('d').isBetween('2012-01-01', '2013-12-31'))), count((ms) => ms >= Date.UTC(2012, 0, 1) && ms <= Date.UTC(2013, 11, 31)))
  const some = rows.find((r) => r.d !== null)!.d!
  t.is(await ids(f.filter(col('d').isIn([some, '1999-01-01']))), rows.filter((r) => r.d === some || r.d === '1999-01-01').length)
  const flags = rowsOfTable(await client.compute(f.select(lit('2018-06-01').gt(col('d')).alias('before'))))
  t.deepEqual(flags.map((r) => r.before), rows.map((r) => (day(r) === null ? null : day(r)! < cut)))
  t.throws(() => f.filter(col('d').lt('06/01/2018')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /an ISO date, 'YYYY-MM-DD'/ })
  t.throws(() => f.filter(col('x').lt('2018-06-01')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /sides of one kind/ })
  t.throws(() => lit(new Date('nope')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /a valid Date/ })
})

test.serial('dt.offsetBy: months first, held to the month end, then days, then time (as DuckDB\'s + INTERVAL); a date moved by hours is refused when built', async (t) => {
  const { rows, f } = files('offset')
  const shift = (iso: string, months: number, days: number) => {
    const [y, m, d] = iso.split('-').map(Number)
    const total = y * 12 + (m - 1) + months
    const ny = Math.floor(total / 12)
    const nm = total - ny * 12
    const last = new Date(Date.UTC(ny, nm + 1, 0)).getUTCDate()
    return Date.UTC(ny, nm, Math.min(d, last)) + days * 86_400_000
  }
  const g = f.select(
    col('d').dt.offsetBy('1mo').alias('m1'),
    col('d').dt.offsetBy('-1y2mo').alias('back'),
    col('d').dt.offsetBy('2w3d').alias('w'),
    col('d').cast('timestamp[ms]').dt.offsetBy('1q1d12h30m').alias('ts'),
  )
  t.deepEqual(g.schema, { m1: 'date32', back: 'date32', w: 'date32', ts: 'timestamp[ms]' })
  const want = rows.map((r) => (r.d === null ? { m1: null, back: null, w: null, ts: null } : { m1: shift(r.d, 1, 0), back: shift(r.d, -14, 0), w: shift(r.d, 0, 17), ts: shift(r.d, 3, 1) + 12.5 * 3_600_000 }))
  t.deepEqual(rowsOfTable(await client.compute(g)), want)
  const ends = rowsOfTable(await client.compute(f.select(lit('2020-01-31').cast('date32').dt.offsetBy('1mo').alias('a'), lit('2020-02-29').cast('date32').dt.offsetBy('1y').alias('b'), lit('2020-03-31').cast('date32').dt.offsetBy('-1mo').alias('c')).head(1)))
  t.deepEqual(ends, [{ a: Date.UTC(2020, 1, 29), b: Date.UTC(2021, 1, 28), c: Date.UTC(2020, 1, 29) }])
  t.throws(() => f.select(col('d').dt.offsetBy('1h').alias('x')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /whole days for a date/ })
  t.throws(() => col('d').dt.offsetBy('1 month'), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /a duration such as '1y'/ })
  t.throws(() => f.select(col('x').dt.offsetBy('1d').alias('x')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /a date32, date64 or timestamp column/ })
})

test.serial('split + explode repeats the other columns; wrong types, nested explodes and RegExp features the core lacks are coded errors when built', async (t) => {
  const { rows, f } = files('explode')
  const g = f.select(col('name').str.split(/\s+/).explode().alias('part'), 'k')
  t.deepEqual(g.schema, { part: 'utf8', k: 'int64' })
  const want = rows.flatMap((r) => (r.name === null ? [{ part: null, k: r.k }] : r.name.split(/\s+/).map((part) => ({ part, k: r.k }))))
  t.deepEqual(rowsOfTable(await client.compute(g)), want)
  t.deepEqual(f.select(col('name').str.split(' ').alias('parts')).schema, { parts: 'list<utf8>' })

  t.throws(() => f.select(col('k').str.lower().alias('z')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /col\("k"\)\.str\.lower\(\)[\s\S]*int64[\s\S]*utf8 column/ })
  t.throws(() => f.withColumns({ z: col('name').plus(1) }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /col\("name"\)\.plus\(lit\(1\)\)[\s\S]*utf8/ })
  t.throws(() => f.withColumns({ z: col('x').dt.year() }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /float64[\s\S]*date32, date64 or timestamp/ })
  t.throws(() => f.select(col('name').explode().alias('z')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /utf8[\s\S]*list column/ })
  t.throws(() => f.select(col('name').str.split(' ').explode().str.lower().alias('z')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /explode\(\) inside another expression/ })
  t.throws(() => col('name').str.contains(/a(?=b)/), { code: 'ERR_SPILLWAY_UNSUPPORTED_REGEX', message: /lookaround/ })
  t.throws(() => col('name').str.contains(/(a)\1/), { code: 'ERR_SPILLWAY_UNSUPPORTED_REGEX', message: /backreference/ })
  t.throws(() => col('name').str.contains(/a/y), { code: 'ERR_SPILLWAY_UNSUPPORTED_REGEX', message: /sticky/ })
  t.throws(() => col('name').str.split(/(,)/), { code: 'ERR_SPILLWAY_UNSUPPORTED_REGEX', message: /capturing group/ })
  t.throws(() => f.drop('nope'), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /"nope"[\s\S]*"name", "k", "x", "d"/ })
})

test.serial('nUnique, first, last, std and var by group merge exactly across partitions (splitOut included)', async (t) => {
  const { rows, f } = files('aggs')
  const groups = new Map<number | null, Row[]>()
  for (const r of rows) groups.set(r.k, [...(groups.get(r.k) ?? []), r])
  const sampleVar = (xs: number[]) => {
    if (xs.length < 2) return null
    const m = xs.reduce((a, b) => a + b, 0) / xs.length
    return xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1)
  }
  const want = [...groups].map(([k, rs]) => {
    const names = rs.map((r) => r.name).filter((v) => v !== null)
    const xs = rs.map((r) => r.x).filter((v) => v !== null)
    const v = sampleVar(xs)
    return { k, u: new Set(names).size, f: names[0] ?? null, l: names.at(-1) ?? null, sd: v === null ? null : Math.sqrt(v), v, n: rs.length }
  })
  want.sort((a, b) => (a.k ?? -9) - (b.k ?? -9))
  for (const splitOut of [1, 2]) {
    const g = f.groupBy('k').agg({ u: nUnique('name'), f: first('name'), l: last('name'), sd: std('x'), v: variance('x'), n: count() }, { splitOut, splitEvery: 2 })
    t.deepEqual(g.schema, { k: 'int64', u: 'int64', f: 'utf8', l: 'utf8', sd: 'float64', v: 'float64', n: 'int64' })
    const got = rowsOfTable(await client.compute(g)).sort((a, b) => ((a.k as number) ?? -9) - ((b.k as number) ?? -9))
    t.is(got.length, want.length)
    for (const [i, w] of want.entries()) {
      const { sd, v, ...exact } = got[i]
      t.deepEqual(exact, { k: w.k, u: w.u, f: w.f, l: w.l, n: w.n })
      t.true(Math.abs((sd as number) - w.sd!) < 1e-9 && Math.abs((v as number) - w.v!) < 1e-9, `${sd} vs ${w.sd}`)
    }
  }
})

test.serial('aggregates of expressions: sum(x * k), mean, count and nUnique of an expression, by group and over every row, as plain JS computes them', async (t) => {
  const { rows, f } = files('agg-exprs')
  // A column named as the hidden ones are: the expressions' columns take other names.
  const g = f.withColumns({ __agg_0: lit(1) }).groupBy('k')
  const got = await client.compute(
    g.agg({ sx: sum(col('x').multiplyBy(col('k'))), m: mean(col('x').plus(1)), c: count(when(col('x').gt(0)).then(col('x'))), u: nUnique(col('name').str.lower()), one: sum('__agg_0') }, { splitOut: 2 }),
  )
  const want = new Map<number | null, { sx: number | null; m: number[]; c: number; u: Set<string>; one: number }>()
  for (const r of rows) {
    const w = want.get(r.k) ?? { sx: null, m: [], c: 0, u: new Set<string>(), one: 0 }
    if (r.x !== null && r.k !== null) w.sx = (w.sx ?? 0) + r.x * r.k
    if (r.x !== null) w.m.push(r.x + 1)
    if (r.x !== null && r.x > 0) w.c++
    if (r.name !== null) w.u.add(r.name.toLowerCase())
    w.one++
    want.set(r.k, w)
  }
  const byKey = new Map(rowsOfTable(got).map((r) => [r.k, r]))
  t.is(byKey.size, want.size)
  for (const [k, w] of want) {
    const mean = w.m.length ? w.m.reduce((a, b) => a + b, 0) / w.m.length : null
    t.deepEqual(byKey.get(k), { k, sx: w.sx, m: mean, c: w.c, u: w.u.size, one: w.one }, `k = ${k}`)
  }
  t.deepEqual(Object.keys(g.agg({ sx: sum(col('x').multiplyBy(col('k'))) }).schema), ['k', 'sx'], 'the hidden column stays hidden')
  const whole = rowsOfTable(await client.compute(f.agg({ known: count(col('x').gt(20)), neg: sum(when(col('x').lt(0)).then(1).otherwise(0)) })))
  t.deepEqual(whole, [{ known: rows.filter((r) => r.x !== null).length, neg: rows.filter((r) => r.x !== null && r.x < 0).length }])
  t.throws(() => f.agg({ w: count(col('name').str.split(' ').explode()) }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /explode/ })
})

test.serial('distinct, head, tail, count, the whole-frame scalars and describe', async (t) => {
  const { rows, f } = files('whole')
  const keyed = f.select('k', col('name').str.lower().alias('n'))
  const distinct = rowsOfTable(await client.compute(keyed.distinct({ splitOut: 2 })))
  const seen = new Set(rows.map((r) => JSON.stringify([r.k, r.name?.toLowerCase() ?? null])))
  t.is(distinct.length, seen.size)
  t.deepEqual(distinct.map((r) => JSON.stringify([r.k, r.n])).sort(), [...seen].sort())

  t.is(await client.compute(f.count()), rows.length)
  t.is(await client.compute(f.filter(col('k').eq(99)).count()), 0)
  const xs = rows.map((r) => r.x).filter((v) => v !== null)
  t.is(await client.compute(f.sum('x')), xs.reduce((a, b) => a + b, 0))
  t.is(await client.compute(f.min('x')), Math.min(...xs))
  t.is(await client.compute(f.nUnique('k')), new Set(rows.map((r) => r.k).filter((v) => v !== null)).size)
  t.is(await client.compute(f.first('name')), rows.find((r) => r.name !== null)!.name)
  t.is(await client.compute(f.filter(col('k').eq(99)).sum('x')), null)
  t.deepEqual(rowsOfTable(await client.compute(f.agg({ n: count(), s: sum('k') }))), [{ n: rows.length, s: rows.reduce((a, r) => a + (r.k ?? 0), 0) }])

  const pick = (t: FrameTable) => rowsOfTable(t).map((r) => r.x)
  t.deepEqual(pick(await client.compute(f.head(7))), rows.slice(0, 7).map((r) => r.x))
  t.deepEqual(pick(await client.compute(f.tail(40))), rows.slice(-40).map((r) => r.x))
  t.deepEqual(pick(await client.compute(f.head(10_000))), rows.map((r) => r.x))
  t.is((await client.compute(f.head(0))).numRows, 0)

  const d = f.describe()
  t.deepEqual(d.schema, { statistic: 'utf8', k: 'float64', x: 'float64' })
  const got = rowsOfTable(await client.compute(d))
  const stats = (vs: (number | null)[]) => {
    const nn = vs.filter((v) => v !== null)
    const m = nn.reduce((a, b) => a + b, 0) / nn.length
    return [nn.length, vs.length - nn.length, m, Math.sqrt(nn.reduce((a, b) => a + (b - m) ** 2, 0) / (nn.length - 1)), Math.min(...nn), Math.max(...nn)]
  }
  const [ks, xst] = [stats(rows.map((r) => r.k)), stats(rows.map((r) => r.x))]
  t.deepEqual(got.map((r) => r.statistic), ['count', 'null_count', 'mean', 'std', 'min', 'max'])
  for (const [i, r] of got.entries()) t.true(Math.abs((r.k as number) - ks[i]) < 1e-9 && Math.abs((r.x as number) - xst[i]) < 1e-9, JSON.stringify([r, ks[i], xst[i]]))
})

test.serial('readText and the word count of DESIGN.md: lines in blocks, unicode, CRLF, an empty file; invalid UTF-8 names file and offset', async (t) => {
  mkdirSync(join(dir, 'text'))
  const a = ['The cat sat on the mat.', '', 'naïve café — the CAT', 'under_score x1 x1 x1', 'trailing space ']
  const b = Array.from({ length: 200 }, (_, i) => `line ${i % 7} of the_text, word${i % 13}`)
  writeFileSync(join(dir, 'text', 'a.txt'), a.join('\r\n'))
  writeFileSync(join(dir, 'text', 'b.txt'), b.join('\n') + '\n')
  writeFileSync(join(dir, 'text', 'c.txt'), '')
  const lines = frame.readText(join(dir, 'text', '*.txt'), { blocksize: 300 })
  t.deepEqual(lines.schema, { line: 'utf8' })
  t.true(lines.npartitions > 5)
  t.deepEqual(rowsOfTable(await client.compute(lines)).map((r) => r.line), [...a, ...b])

  const counts = new Map<string, number>()
  for (const l of [...a, ...b]) for (const w of l.split(/[^A-Za-z0-9_]+/)) if (w !== '') counts.set(w, (counts.get(w) ?? 0) + 1)
  const wordCount = (re: RegExp | string) =>
    lines
      .select(col('line').str.split(re).explode().alias('word'))
      .filter(col('word').neq(''))
      .groupBy('word')
      .agg({ n: count() }, { splitOut: 4 })
  const got = rowsOfTable(await client.compute(wordCount(/[^A-Za-z0-9_]+/)))
  t.deepEqual(sorted(new Map(got.map((r) => [r.word, r.n]))), sorted(counts))
  t.is(got.length, counts.size)
  // \W+ takes the same fused path; a pattern it cannot make a byte table of splits with the regex.
  t.deepEqual(sorted(new Map(rowsOfTable(await client.compute(wordCount(/\W+/))).map((r) => [r.word, r.n]))), sorted(counts))
  const spaced = new Map<string, number>()
  for (const l of [...a, ...b]) for (const w of l.split(/ +|,/)) if (w !== '') spaced.set(w, (spaced.get(w) ?? 0) + 1)
  t.deepEqual(sorted(new Map(rowsOfTable(await client.compute(wordCount(/ +|,/))).map((r) => [r.word, r.n]))), sorted(spaced))

  // A gzip file is one partition, streamed by the core.
  writeFileSync(join(dir, 'text', 'z.log.gz'), gzipSync(b.join('\n') + '\n'))
  const z = frame.readText(join(dir, 'text', 'z.log.gz'), { blocksize: 100 })
  t.is(z.npartitions, 1)
  t.deepEqual(rowsOfTable(await client.compute(z)).map((r) => r.line), b)

  writeFileSync(join(dir, 'text', 'latin.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
  t.deepEqual(rowsOfTable(await client.compute(frame.readText(join(dir, 'text', 'latin.txt'), { encoding: 'latin1' }))), [{ line: 'café' }])
  const e = await t.throwsAsync(client.compute(frame.readText(join(dir, 'text', 'latin.txt'))), { code: 'ERR_SPILLWAY_READ' })
  t.true(e!.message.includes('latin.txt') && e!.message.includes('byte 3'), e!.message)
})
