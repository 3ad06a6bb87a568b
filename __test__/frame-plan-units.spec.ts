// The optimizer's rules, each shown by the plan frame.explain() prints before
// (as written: each method on the spot) and after: projection pushdown into
// a Parquet scan, predicate pushdown through projections, sorts, group-bys
// and each kind of join, filters merged, and the rewrites that must not
// happen (a filter that can fail, an outer join's missing side, an
// aggregate's value). Built here, no cluster; the answers are checked in
// frame-plan.spec.ts and against DuckDB by the differential suite.
import test from 'ava'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { col, count, frame, lit, max, sum } from 'spillway'
// The package's own module (the plans live beside its frames).
import { optimized, planOf } from '../dist/frame/plan/node'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-plan-'))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))
const orders = join(dir, 'orders.parquet')
const items = join(dir, 'items.parquet')

test.before(async () => {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  await c.run(`COPY (SELECT i AS id, i % 7 AS cust, DATE '2024-01-01' + i::INTEGER AS day, 'note ' || i AS note, i * 1.5::DOUBLE AS total FROM range(200) t(i)) TO '${orders}' (FORMAT parquet)`)
  await c.run(`COPY (SELECT i % 200 AS id, i AS line, i % 13 AS qty, ((i % 5) * 0.5)::DOUBLE AS price, 'x' || i AS note FROM range(10000) t(i)) TO '${items}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`)
  c.closeSync()
})

const scanLine = (plan: string, file: string) => plan.split('\n').find((l) => l.includes(`read-parquet ${file}`))

test('projection pushdown: a Parquet scan reads only the columns the plan above it reads', (t) => {
  const q = frame.readParquet(orders).filter(col('cust').eq(3)).select('id', col('total').multiplyBy(2).alias('t2'))
  t.regex(scanLine(q.explain(), orders)!, /columns \[id, cust, total\]/)
  const counted = frame.readParquet(orders).groupBy('cust').agg({ n: count(), top: max('total') })
  t.regex(scanLine(counted.explain(), orders)!, /columns \[cust, total\], 1 partition, 200 rows, 0\.0 MiB in memory$/)
  // Nothing read but rows: one column stands in.
  t.regex(scanLine(frame.readParquet(orders).agg({ n: count() }).explain(), orders)!, /columns \[id\]/)
  // The output keeps its columns, in order.
  const all = frame.readParquet(orders).filter(col('day').gt('2024-03-01'))
  t.deepEqual(optimized(all).columns, ['id', 'cust', 'day', 'note', 'total'])
  const narrow = optimized(q)
  t.not(narrow, q)
  t.deepEqual(narrow.columns, ['id', 't2'])
})

test('predicate pushdown: a filter of a join output goes to the side it tests, and to both for an inner join on `on` keys', (t) => {
  const o = frame.readParquet(orders)
  const i = frame.readParquet(items)
  const j = o.join(i, { on: 'id' })
  const plan = j.filter(col('qty').gt(5).and(col('cust').eq(1)).and(col('id').lt(50))).explain().split('\n')
  t.true(plan[0].startsWith('join inner on [id]'), plan.join('\n'))
  // Each side: its own test and the key's, merged into one filter right above its scan (the scan prunes by the first).
  const filters = plan.filter((l) => l.trimStart().startsWith('filter'))
  t.is(filters.length, 2, plan.join('\n'))
  t.true(filters.some((l) => l.includes('col("cust").eq(lit(1))') && l.includes('col("id").lt(lit(50))')))
  t.true(filters.some((l) => l.includes('col("qty").gt(lit(5))') && l.includes('col("id").lt(lit(50))')))
  // A suffixed right column is tested on the right under its own name.
  const named = o.join(i, { on: 'id' }).filter(col('note_right').eq('x7')).explain()
  t.regex(named, /filter col\("note"\)\.eq\(lit\("x7"\)\)\n\s+read-parquet .*items\.parquet/)
})

test('predicate pushdown keeps an outer join\'s missing side, a value that can fail, and an aggregate\'s value above', (t) => {
  const o = frame.readParquet(orders)
  const i = frame.readParquet(items)
  // left join: a test of the right side's columns would keep the left rows it drops as unmatched.
  const left = o.join(i, { on: 'id', how: 'left' }).filter(col('qty').gt(5)).explain().split('\n')
  t.true(left[0].startsWith('filter col("qty")'), left.join('\n'))
  const leftOwn = o.join(i, { on: 'id', how: 'left' }).filter(col('cust').eq(2)).explain().split('\n')
  t.true(leftOwn[0].startsWith('join left'), leftOwn.join('\n'))
  const outer = o.join(i, { on: 'id', how: 'outer' }).filter(col('cust').eq(2)).explain().split('\n')
  t.true(outer[0].startsWith('filter'), outer.join('\n'))
  // An integer % may fail on rows the join would have dropped (x % 0): it stays where it was written.
  const mod = o.join(i, { on: 'id' }).filter(col('id').modulo(col('qty')).eq(0)).explain().split('\n')
  t.true(mod[0].startsWith('filter'), mod.join('\n'))
  // HAVING on a key moves below the group-by; on an aggregate it cannot.
  const g = o.groupBy('cust').agg({ s: sum('total') })
  const onKey = g.filter(col('cust').gt(2)).explain().split('\n')
  t.true(onKey[0].startsWith('aggregate by [cust]') && onKey[1].trimStart().startsWith('filter col("cust")'), onKey.join('\n'))
  const onValue = g.filter(col('s').gt(100)).explain().split('\n')
  t.true(onValue[0].startsWith('filter col("s")'), onValue.join('\n'))
  // Over every row (one group), a constant test cannot move: the group exists even with no rows.
  const whole = o.agg({ n: count() }).filter(lit(false)).explain().split('\n')
  t.true(whole[0].startsWith('filter'), whole.join('\n'))
})

test('predicate pushdown through a projection (renamed back where aliased) and a sort; filters merged', (t) => {
  const q = frame
    .readParquet(orders)
    .select(col('id'), col('cust').alias('customer'), col('total').multiplyBy(2).alias('t2'))
    .sortBy('t2')
    .filter(col('customer').eq(4))
    .filter(col('id').gt(10))
  const plan = q.explain().split('\n').map((l) => l.trim())
  // A sort's head explains as its top-n over the same plan.
  const head = q.head(3).explain().split('\n').map((l) => l.trim())
  t.is(head[0], "head 3: each partition's first rows by the sort's keys (top-n), then one merge")
  t.deepEqual(head.slice(1), plan)
  t.regex(frame.readParquet(orders).tail(2).explain(), /^tail 2: the last partitions first, until they hold them\n {2}read-parquet /)
  t.true(plan[0].startsWith('sort by [t2]'), plan.join('\n'))
  t.true(plan[1].startsWith('select id, customer = col("cust").alias("customer")'), plan.join('\n'))
  t.is(plan[2], 'filter col("cust").eq(lit(4)).and(col("id").gt(lit(10)))')
  // A computed column's test stays above the projection that computes it.
  const computed = frame.readParquet(orders).select(col('id'), col('total').multiplyBy(2).alias('t2')).filter(col('t2').gt(3)).explain().split('\n')
  t.true(computed[0].startsWith('filter col("t2")'), computed.join('\n'))
})

test('a join keeps its output names when its sides are pruned: a right column that clashes keeps its suffix', (t) => {
  const o = frame.readParquet(orders)
  const i = frame.readParquet(items)
  const q = o.join(i, { on: 'id' }).select('id', 'note_right')
  const plan = q.explain()
  t.regex(scanLine(plan, orders)!, /columns \[id, note\]/, plan)
  t.regex(scanLine(plan, items)!, /columns \[id, note\]/, plan)
  t.deepEqual(optimized(q).columns, ['id', 'note_right'])
  const semi = o.join(i, { on: 'id', how: 'semi' }).select('cust')
  t.regex(scanLine(semi.explain(), items)!, /columns \[id\]/)
})

test('explain names the strategies and why; a frame made some other way is a leaf the rules leave alone', (t) => {
  const o = frame.readParquet(orders)
  const plan = o.join(frame.readParquet(items), { on: 'id' }).groupBy('cust').agg({ n: count() }).explain()
  t.regex(plan, /^aggregate by \[cust\]: n = count\(\): tree of 1 partial state into 1/)
  t.regex(plan, /join inner on \[id\]: broadcast the right side \(its columns' 0\.\d MiB in memory are under broadcastBytes \(8\.0 MiB\)\)/)
  t.regex(o.groupBy('cust').agg({ n: count() }, { method: 'shuffle', splitOut: 2 }).explain(), /shuffle into 2/)
  // A Parquet side of many partitions is broadcast by its columns' bytes in memory, which its footers give.
  const many = frame.readParquet(items, { blocksize: 1024 })
  t.true(many.npartitions >= 4, `${many.npartitions} partitions`)
  const big = frame.readParquet(orders, { blocksize: 1024 })
  t.regex(big.join(many, { on: 'id', how: 'left' }).explain(), /broadcast the right side \(its columns' 0\.\d MiB in memory are under broadcastBytes/)
  // broadcastBytes given: sizes alone decide, as for any frame.
  t.regex(big.join(many, { on: 'id', how: 'left', broadcastBytes: 0 }).explain(), /shuffle both sides into \d+ partitions/)
  const shuffled = o.shuffle('cust')
  t.is(planOf(shuffled).op, 'frame')
  t.regex(shuffled.explain(), /^shuffle: 1 partition, columns \[id, cust, day, note, total\]$/)
})
