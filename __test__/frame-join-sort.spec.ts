// Frame shuffle, joins and sortBy through the package and real workers:
// CSV files in several partitions (an empty file among them, nulls in keys
// and values), every join kind on the broadcast and the shuffled path, and
// sorts on several keys, each checked exactly against a plain-JS answer.
import test from 'ava'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { col, frame, schedulerWorkers, type Client, type FrameTable } from 'spillway'
import { sharedCluster, until } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-join-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

type Value = string | number | null
type Row = Record<string, Value>

function random(seed: number): (m: number) => number {
  let x = seed
  return (m) => {
    x = (x * 1103515245 + 12345) % 2 ** 31
    return Math.floor(x / 2 ** 12) % m
  }
}

const cell = (v: Value) => (v === null ? '' : typeof v === 'string' ? `"${v.replace(/"/g, '""')}"` : String(v))

function writeCsv(path: string, columns: string[], rows: Row[]): void {
  writeFileSync(path, [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n')
}

/** Orders (cust repeats, nulls in keys) over three files, one of them empty; customers with duplicate and missing keys. */
function makeFiles(sub: string, n = 400): { orders: Row[]; customers: Row[] } {
  mkdirSync(join(dir, sub))
  const next = random(7)
  const regions = ['north', 'south', 'e,ast']
  const order = (id: number): Row => ({ id, cust: next(9) === 0 ? null : next(30), region: next(8) === 0 ? null : regions[next(3)], amount: next(6) === 0 ? null : next(1000) / 4 })
  const a = Array.from({ length: n }, (_, i) => order(i))
  const b = Array.from({ length: n / 2 }, (_, i) => order(n + i))
  const customers: Row[] = Array.from({ length: 40 }, (_, i) => ({ cust: i % 7 === 3 ? null : i < 35 ? i : i - 10, region: regions[i % 3], name: `c${i}`, amount: i }))
  const cols = ['id', 'cust', 'region', 'amount']
  writeCsv(join(dir, sub, 'orders-a.csv'), cols, a)
  writeCsv(join(dir, sub, 'orders-b.csv'), cols, [])
  writeCsv(join(dir, sub, 'orders-c.csv'), cols, b)
  writeCsv(join(dir, sub, 'cust-a.csv'), ['cust', 'region', 'name', 'amount'], customers.slice(0, 25))
  writeCsv(join(dir, sub, 'cust-b.csv'), ['cust', 'region', 'name', 'amount'], customers.slice(25))
  return { orders: [...a, ...b], customers }
}

/** A Table's rows as plain objects, int64 as numbers. */
const rowsOf = (t: FrameTable): Row[] => t.toArray().map((r) => Object.fromEntries(Object.entries(r.toJSON()).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : (v as Value)])))
const canonical = (rows: Row[]) => rows.map((r) => JSON.stringify(r)).sort()

type How = 'inner' | 'left' | 'right' | 'outer' | 'semi' | 'anti'

/** The join the slow, obvious way: a null in any key matches nothing, as SQL. */
function plainJoin(left: Row[], right: Row[], lk: string[], rk: string[], how: How, out: (l: Row | null, r: Row | null) => Row): Row[] {
  const eq = (l: Row, r: Row) => lk.every((k, i) => l[k] !== null && r[rk[i]] !== null && l[k] === r[rk[i]])
  const rows: Row[] = []
  const matched = new Set<Row>()
  for (const l of left) {
    const ms = right.filter((r) => eq(l, r))
    if (how === 'semi' || how === 'anti') {
      if ((ms.length > 0) === (how === 'semi')) rows.push(l)
      continue
    }
    for (const r of ms) (rows.push(out(l, r)), matched.add(r))
    if (!ms.length && (how === 'left' || how === 'outer')) rows.push(out(l, null))
  }
  if (how === 'right' || how === 'outer') for (const r of right) if (!matched.has(r)) rows.push(out(null, r))
  return rows
}

const HOWS: How[] = ['inner', 'left', 'right', 'outer', 'semi', 'anti']

test.serial('shuffle: every row once, equal keys together, through the P2P shuffle', async (t) => {
  const { orders } = makeFiles('shuffle')
  const f = frame.readCsv(join(dir, 'shuffle', 'orders-*.csv'), { blocksize: 2000 })
  t.true(f.npartitions >= 4, `${f.npartitions} partitions`)
  const s = f.shuffle('cust', { npartitions: 5 })
  t.is(s.npartitions, 5)
  t.deepEqual(s.schema, f.schema)
  t.deepEqual(canonical(rowsOf(await client.compute(s))), canonical(orders))
  // Each output keeps its rows in input order (ids rising) and outputs follow each other: the runs of rising ids are the outputs, and each key is in one of them.
  const rows = rowsOf(await client.compute(s))
  const runOf = new Map<Value, number>()
  let run = 0
  for (const [i, r] of rows.entries()) {
    if (i > 0 && (r.id as number) < (rows[i - 1].id as number)) run++
    t.is(runOf.get(r.cust) ?? run, run, `key ${r.cust} in two outputs`)
    runOf.set(r.cust, run)
  }
  t.true(run >= 1 && run < 5, `${run + 1} runs`)
})

/** The expected output row of a join `on` cust and region: keys once, the right's clashing amount suffixed. */
const onBoth = (l: Row | null, r: Row | null): Row => ({ id: l?.id ?? null, cust: l ? l.cust : r!.cust, region: l ? l.region : r!.region, amount: l?.amount ?? null, name: r?.name ?? null, amount_right: r?.amount ?? null })

test.serial('join: every kind on two keys, broadcast and shuffled, exact against nested loops', async (t) => {
  const { orders, customers } = makeFiles('join')
  const o = frame.readCsv(join(dir, 'join', 'orders-*.csv'), { blocksize: 2000 })
  const c = frame.readCsv(join(dir, 'join', 'cust-*.csv'), { blocksize: 300 })
  t.true(o.npartitions >= 4 && c.npartitions >= 2, `${o.npartitions} and ${c.npartitions} partitions`)
  for (const how of HOWS) {
    const want = canonical(plainJoin(orders, customers, ['cust', 'region'], ['cust', 'region'], how, onBoth))
    for (const broadcastBytes of [undefined, 0]) {
      const j = o.join(c, { on: ['cust', 'region'], how, broadcastBytes })
      const semi = how === 'semi' || how === 'anti'
      t.deepEqual(j.columns, semi ? ['id', 'cust', 'region', 'amount'] : ['id', 'cust', 'region', 'amount', 'name', 'amount_right'], how)
      t.deepEqual(canonical(rowsOf(await client.compute(j))), want, `${how}, broadcastBytes ${broadcastBytes}`)
    }
  }
})

test.serial('join: leftOn/rightOn keep both keys, a one-partition side is broadcast, an empty side joins to nothing', async (t) => {
  const { orders, customers } = makeFiles('join2')
  const o = frame.readCsv(join(dir, 'join2', 'orders-*.csv'), { blocksize: 2000 })
  const c = frame.readCsv(join(dir, 'join2', 'cust-a.csv')).select('cust', 'name')
  const empty = frame.readCsv(join(dir, 'join2', 'orders-b.csv'), { schema: { id: 'int64', cust: 'int64', region: 'utf8', amount: 'float64' } })
  const j = c.join(o, { leftOn: 'cust', rightOn: 'cust', how: 'left', suffix: '_o', broadcastBytes: 0 })
  t.deepEqual(j.schema, { cust: 'int64', name: 'utf8', id: 'int64', cust_o: 'int64', region: 'utf8', amount: 'float64' })
  const out = (l: Row | null, r: Row | null): Row => ({ cust: l!.cust, name: l!.name, id: r?.id ?? null, cust_o: r?.cust ?? null, region: r?.region ?? null, amount: r?.amount ?? null })
  const left = customers.slice(0, 25).map((r) => ({ cust: r.cust, name: r.name }))
  t.deepEqual(canonical(rowsOf(await client.compute(j))), canonical(plainJoin(left, orders, ['cust'], ['cust'], 'left', out)))
  // The customers' file is one partition: broadcast to each partition of the orders.
  const onCust = (l: Row | null, r: Row | null): Row => ({ ...l!, name: r!.name })
  const broadcast = o.join(c, { on: 'cust', broadcastBytes: 0 })
  t.is(broadcast.npartitions, o.npartitions)
  t.deepEqual(canonical(rowsOf(await client.compute(broadcast))), canonical(plainJoin(orders, left, ['cust'], ['cust'], 'inner', onCust)))
  t.is((await client.compute(o.join(empty, { on: 'id', how: 'inner', broadcastBytes: 0 }))).numRows, 0)
  t.is((await client.compute(o.join(empty, { on: 'id', how: 'anti', broadcastBytes: 0 }))).numRows, orders.length)
})

test.serial('join: unknown columns, mismatched key types and bad options are errors when the join is built', (t) => {
  makeFiles('joinerr')
  const o = frame.readCsv(join(dir, 'joinerr', 'orders-*.csv'))
  const c = frame.readCsv(join(dir, 'joinerr', 'cust-*.csv'))
  const e = t.throws(() => o.join(c, { on: 'custt' }), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND' })
  t.true(e!.message.includes('"custt"') && e!.message.includes('"id", "cust", "region", "amount"'), e!.message)
  t.throws(() => o.join(c, { leftOn: 'id', rightOn: 'nam' }), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /right side[\s\S]*"nam"[\s\S]*"cust", "region", "name", "amount"/ })
  t.throws(() => o.join(c, { leftOn: 'id', rightOn: 'name' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /"id" and "name"[\s\S]*int64 and utf8/ })
  t.throws(() => o.join(c, { on: 'cust', how: 'cross' as never }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /inner, left, right, outer, semi, anti/ })
  t.throws(() => o.join(c, { on: 'cust', leftOn: 'cust' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /either on, or leftOn and rightOn/ })
  t.throws(() => o.join(c, { leftOn: ['cust', 'region'], rightOn: 'cust' }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /as many keys as leftOn \(2\)/ })
})

/** JS's stable sort by keys, nulls last or first, each key ascending or descending. */
function plainSort(rows: Row[], keys: string[], descending: boolean[], nullsLast: boolean): Row[] {
  return [...rows].sort((a, b) => {
    for (const [i, k] of keys.entries()) {
      const [x, y] = [a[k], b[k]]
      if (x === y) continue
      if (x === null || y === null) return (x === null) === nullsLast ? 1 : -1
      const c = x < y ? -1 : 1
      return descending[i] ? -c : c
    }
    return 0
  })
}

test.serial('sortBy: several keys, ties, nulls first or last, descending per key: the exact order, stable', async (t) => {
  const { orders } = makeFiles('sort')
  const f = frame.readCsv(join(dir, 'sort', 'orders-*.csv'), { blocksize: 2000 })
  const cases: [string[], boolean[], boolean][] = [
    [['region', 'amount'], [false, true], true],
    [['cust'], [true], false],
    [['amount', 'cust', 'id'], [false, false, true], true],
  ]
  for (const [keys, descending, nullsLast] of cases) {
    const s = f.sortBy(keys, { descending, nullsLast, npartitions: 4 })
    t.is(s.npartitions, 4)
    t.deepEqual(rowsOf(await client.compute(s)), plainSort(orders, keys, descending, nullsLast), `${keys} ${descending} ${nullsLast}`)
  }
  t.deepEqual(rowsOf(await client.compute(f.sortBy('id', { descending: true }))), [...orders].reverse())
  // head(n) of a sort is a top-n: each input partition keeps its first n, one task the first n of
  // theirs (no sample, no boundaries, no shuffle); ties still in input order, as the full sort's.
  for (const [keys, descending, nullsLast] of cases) {
    const s = f.sortBy(keys, { descending, nullsLast, npartitions: 4 })
    const top = s.topN(7)!
    t.is(top.npartitions, 1)
    t.is(top.taskCount(), f.npartitions + 1, 'a task per input partition and one over them')
    t.true(s.taskCount() > 3 * f.npartitions, 'where the sort itself samples, shuffles and collects')
    for (const n of [0, 1, 7, orders.length + 5]) t.deepEqual(rowsOf(await client.compute(s.head(n))), plainSort(orders, keys, descending, nullsLast).slice(0, n), `head(${n}) by ${keys}`)
  }
  t.is(f.filter(col('amount').gt(1)).topN(3), undefined, 'a frame that is not a sort has no top-n')
  t.is(f.sortBy('id').filter(col('amount').gt(1)).topN(3), undefined, 'nor one with steps after its sort')
  t.throws(() => f.sortBy(['id', 'cust'], { descending: [true] }), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /a list of 2/ })
  t.throws(() => f.sortBy('idd'), { code: 'ERR_SPILLWAY_COLUMN_NOT_FOUND', message: /"idd"/ })
})

test.serial('nothing a compute made stays held once it resolved: sortBy().head, tail, a join then head, a filter then head leave no key, value or shard', async (t) => {
  const { orders } = makeFiles('held')
  const f = frame.readCsv(join(dir, 'held', 'orders-*.csv'), { blocksize: 2000 })
  const c = frame.readCsv(join(dir, 'held', 'cust-*.csv'), { blocksize: 300 })
  const byId = [...orders].sort((a, b) => (a.id as number) - (b.id as number))
  t.deepEqual(rowsOf(await client.compute(f.sortBy('id', { npartitions: 4 }).head(3))), byId.slice(0, 3))
  t.deepEqual(rowsOf(await client.compute(f.sortBy('id', { npartitions: 4 }).tail(2))), byId.slice(-2))
  t.is((await client.compute(f.join(c, { on: 'cust', how: 'inner', broadcastBytes: 0 }).head(3))).numRows, 3)
  t.is((await client.compute(f.filter(col('amount').gt(100)).head(3))).numRows, 3)
  await until(() => client.scheduler.tasks.size === 0, 10_000, 'every key let go of')
  for (const w of Object.values(await schedulerWorkers(client))) {
    t.is(w.tasks.held + w.tasks.processing, 0, `${w.name} holds nothing`)
    t.is((w.metrics as any).shuffle?.heldShards ?? 0, 0, `${w.name} holds no shard`)
  }
})

test.serial('sortBy reads each block once: one task per partition reads the file, the sample and the split read its output', async (t) => {
  const { orders } = makeFiles('sort-once')
  const f = frame.readCsv(join(dir, 'sort-once', 'orders-*.csv'), { blocksize: 2000 }).filter(col('amount').gt(10))
  const s = f.sortBy('id')
  const tasks = s.tasks()
  const reading = tasks.filter((task) => JSON.stringify(task.task.args[0]).includes('"kind":"csv"'))
  t.is(reading.length, f.npartitions)
  t.true(reading.every((task) => task.task.func.op === 'frame.partition'))
  const want = orders.filter((r) => r.amount !== null && (r.amount as number) > 10)
  t.deepEqual(rowsOf(await client.compute(s)), plainSort(want, ['id'], [false], true))
})

test.serial('a worker killed while a shuffled join runs: the exact answer', async (t) => {
  const { orders, customers } = makeFiles('kill')
  const o = frame.readCsv(join(dir, 'kill', 'orders-*.csv'), { blocksize: 500 })
  const c = frame.readCsv(join(dir, 'kill', 'cust-*.csv'), { blocksize: 200 })
  await until(async () => Object.values(await schedulerWorkers(client)).some((w) => w.name === 'worker-0' && w.status === 'running'), 60_000, 'worker-0 to run')
  const victim = Object.values(await schedulerWorkers(client)).find((w) => w.name === 'worker-0')!
  const lost = client.scheduler.lostWorkers
  const pending = client.compute(o.join(c, { on: ['cust', 'region'], how: 'outer', broadcastBytes: 0 }))
  await until(() => [...client.scheduler.tasks.values()].some((r) => r.group === 'join-split' && r.state === 'processing'), 60_000, 'a split to start')
  process.kill(victim.pid, 'SIGKILL')
  t.deepEqual(canonical(rowsOf(await pending)), canonical(plainJoin(orders, customers, ['cust', 'region'], ['cust', 'region'], 'outer', onBoth)))
  t.true(client.scheduler.lostWorkers > lost)
})

test.serial('a broadcast join (its small side built once per worker): exact with a worker killed mid-join, and after the small side is rewritten in place', async (t) => {
  const { orders, customers } = makeFiles('bkill', 1000)
  const o = frame.readCsv(join(dir, 'bkill', 'orders-*.csv'), { blocksize: 500 })
  const c = frame.readCsv(join(dir, 'bkill', 'cust-*.csv'))
  const j = o.join(c, { on: ['cust', 'region'], how: 'left' })
  t.is(j.npartitions, o.npartitions, 'broadcast: one task per partition of the orders')
  await until(async () => Object.values(await schedulerWorkers(client)).some((w) => w.name === 'worker-0' && w.status === 'running'), 60_000, 'worker-0 to run')
  const victim = Object.values(await schedulerWorkers(client)).find((w) => w.name === 'worker-0')!
  const lost = client.scheduler.lostWorkers
  const pending = client.compute(j)
  // Checked on every turn of the event loop, not every 50 ms: the whole join can finish within 50 ms on an idle machine.
  for (const end = Date.now() + 60_000; ![...client.scheduler.tasks.values()].some((r) => r.group === 'join' && r.state === 'memory'); await new Promise((r) => setImmediate(r))) {
    if (Date.now() > end) throw new Error('timed out waiting for a join task to finish')
  }
  process.kill(victim.pid, 'SIGKILL')
  t.deepEqual(canonical(rowsOf(await pending)), canonical(plainJoin(orders, customers, ['cust', 'region'], ['cust', 'region'], 'left', onBoth)))
  t.true(client.scheduler.lostWorkers > lost)
  // The same bytes' length, new names: the same tasks, so a small side kept by its task keys would answer with the old names.
  const renamed = customers.map((r) => ({ ...r, name: `d${String(r.name).slice(1)}` }))
  writeCsv(join(dir, 'bkill', 'cust-a.csv'), ['cust', 'region', 'name', 'amount'], renamed.slice(0, 25))
  writeCsv(join(dir, 'bkill', 'cust-b.csv'), ['cust', 'region', 'name', 'amount'], renamed.slice(25))
  t.deepEqual(canonical(rowsOf(await client.compute(j))), canonical(plainJoin(orders, renamed, ['cust', 'region'], ['cust', 'region'], 'left', onBoth)))
})
