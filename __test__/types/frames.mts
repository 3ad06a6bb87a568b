// A user's strict TypeScript over typed frames, against the published entry
// ('spillway', its generated declarations). frame-types.spec.ts
// type-checks it: every `@ts-expect-error` line must be refused and every
// other line accepted. Nothing here runs.

import { bag, col, count, frame, lit, max, mean, sum, type Client, type Frame, type FrameTable } from 'spillway'
import type { Int64, Float64, Utf8, Table } from 'apache-arrow'

type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false
function same<A, B>(_: Equal<A, B>): void {}

declare const client: Client
type Sales = { id: 'int64'; city: 'utf8'; amount: 'float64' }

export async function typed(): Promise<void> {
  // A schema given: the frame's columns are known to tsc.
  const sales = bag.fromSequence([{ id: 1, city: 'Oslo', amount: 2.5 }]).toFrame({ id: 'int64', city: 'utf8', amount: 'float64' })
  same<typeof sales, Frame<{ id: 'int64'; city: 'utf8'; amount: 'float64' }>>(true)

  // col names are checked, through the expression's combinators.
  sales.filter(col('amount').gt(1).and(col('city').eq('Oslo')))
  sales.filter(col('id').isNotNull().or(lit(true)))
  // @ts-expect-error no column "amnt"
  sales.filter(col('amnt').gt(1))
  // @ts-expect-error no column "town", however deep in the expression
  sales.filter(col('amount').gt(1).and(col('town').eq('Oslo')))

  // select of names keeps their types; a wrong name is refused.
  const two = sales.select('id', 'city')
  same<typeof two, Frame<{ id: 'int64'; city: 'utf8' }>>(true)
  // @ts-expect-error no column "name"
  sales.select('id', 'name')
  // @ts-expect-error no column "name" in an expression either
  sales.select(col('id'), col('name'))
  // An expression with an alias: its column is not tracked, the frame untyped.
  same<typeof sales extends Frame<any> ? true : false, true>(true)

  // groupBy keys and aggregates' columns are checked; the result's columns are the keys and aggregates, typed.
  const byCity = sales.groupBy('city').agg({ n: count(), total: sum('amount'), top: max('id'), avg: mean(col('id')) })
  same<typeof byCity, Frame<{ city: 'utf8'; n: 'int64'; total: 'float64'; top: 'int64'; avg: 'float64' }>>(true)
  // @ts-expect-error no key column "town"
  sales.groupBy('town')
  // @ts-expect-error no column "amnt" to sum
  sales.groupBy('city').agg({ total: sum('amnt') })

  // Results: an apache-arrow Table whose rows are typed.
  const table = await client.compute(byCity)
  same<typeof table, FrameTable<{ city: 'utf8'; n: 'int64'; total: 'float64'; top: 'int64'; avg: 'float64' }>>(true)
  const row = table.get(0)!
  const n: bigint = row.n
  const city: string = row.city
  const total: number = row.total
  // @ts-expect-error no column "nme" in the result's rows
  row.nme
  // @ts-expect-error int64 values are bigints, not strings
  const wrong: string = row.n
  void [n, city, total, wrong]
  const columns: Table<{ city: Utf8; n: Int64; total: Float64; top: Int64; avg: Float64 }> = table
  void columns

  // iterate yields typed batches; persist keeps the type.
  const kept = await client.persist(sales)
  same<typeof kept, typeof sales>(true)
  for await (const batch of client.iterate(two)) {
    const id: bigint | null = batch.get(0)!.id
    // @ts-expect-error "amount" was not selected
    batch.get(0)!.amount
    void id
  }

  // mapBatches with a schema: its output's columns.
  const doubled = sales.mapBatches((t: any) => t, { schema: { id: 'int64', twice: 'float64' } })
  doubled.filter(col('twice').gt(2))
  // The function's table is typed by the frame's columns; it must give a Table.
  sales.mapBatches((t) => t.select(['id']))
  sales.mapBatches(async (t, arrow) => arrow.tableFromArrays({ id: Float64Array.from(t.getChild('amount')!.toArray()) }))
  // @ts-expect-error no column "amnt" in the partition's table
  sales.mapBatches((t) => t.select(['amnt']))
  // @ts-expect-error the function must give a Table, not an array
  sales.mapBatches((t) => t.toArray())
  // @ts-expect-error "amount" is not among mapBatches' output columns
  doubled.filter(col('amount').gt(2))
  void ({} as Sales)
}

export async function read(): Promise<void> {
  // A schema given to readCsv is the frame's columns, for tsc as at run time.
  const trips = frame.readCsv('/data/trips/*.csv', { schema: { id: 'int64', name: 'utf8', price: 'float64', day: 'date32', ts: 'timestamp[ms]' } })
  same<typeof trips, Frame<{ id: 'int64'; name: 'utf8'; price: 'float64'; day: 'date32'; ts: 'timestamp[ms]' }>>(true)
  const byName = trips.filter(col('price').gt(1).and(col('day').isNotNull())).groupBy('name').agg({ n: count(), top: max('price') })
  same<typeof byName, Frame<{ name: 'utf8'; n: 'int64'; top: 'float64' }>>(true)
  // @ts-expect-error no column "prise"
  trips.filter(col('prise').gt(1))
  // @ts-expect-error no column "nme" to group by
  trips.groupBy('nme')
  // @ts-expect-error no column "when" to select
  trips.select('id', 'when')
  const row = (await client.compute(trips.select('id', 'name', 'price'))).get(0)!
  const id: bigint = row.id
  const name: string = row.name
  const price: number = row.price
  // @ts-expect-error "day" was not selected
  row.day
  // @ts-expect-error a float64 is a number, not a string
  const wrongPrice: string = row.price
  void [id, name, price, wrongPrice]
  // @ts-expect-error a type name that does not exist ("int46") is refused
  frame.readCsv('/x.csv', { schema: { id: 'int46' } })

  // readNdjson with a schema: typed the same way.
  const events = frame.readNdjson('/data/events/*.ndjson', { schema: { user: 'utf8', bytes: 'int64' } })
  same<typeof events, Frame<{ user: 'utf8'; bytes: 'int64' }>>(true)
  events.groupBy('user').agg({ total: sum('bytes') })
  // @ts-expect-error no column "byte"
  events.groupBy('user').agg({ total: sum('byte') })

  // columns keeps those of the schema, in that order.
  const two = frame.readCsv('/data/trips/*.csv', { columns: ['price', 'id'], schema: { id: 'int64', name: 'utf8', price: 'float64' } })
  same<typeof two, Frame<{ price: 'float64'; id: 'int64' }>>(true)
  // @ts-expect-error "name" is not among the columns kept
  two.select('name')

  // fromArrow of a typed Table: its columns, by the contract's names.
  const arrowTable = {} as Table<{ id: Int64; city: Utf8; amount: Float64 }>
  const fromTable = frame.fromArrow(arrowTable)
  same<typeof fromTable, Frame<{ id: 'int64'; city: 'utf8'; amount: 'float64' }>>(true)
  fromTable.groupBy('city').agg({ total: sum('amount') })
  // @ts-expect-error no column "town" in the Table
  fromTable.groupBy('town')
  // An untyped Table: an untyped frame.
  frame.fromArrow({} as Table).filter(col('anything').gt(1))

  // No schema: untyped, every name compiles (the columns are known only when the files are read).
  frame.readCsv('/data/*.csv', { nullValues: ['NA'] }).filter(col('anything').gt(1))
}

export async function untyped(): Promise<void> {
  // Columns not known to tsc (a CSV inferred at run time): any name compiles, as before.
  const f = frame.readCsv('/data/*.csv')
  f.filter(col('anything').gt(1)).select('a', 'b').groupBy('a').agg({ n: count(), s: sum('b') })
  const t = await client.compute(f)
  const anyRow = t.get(0)!.whatever
  void anyRow
  const items = await client.compute(f.toBag())
  same<typeof items, Record<string, unknown>[]>(true)
}
