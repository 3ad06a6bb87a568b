// A user's strict TypeScript file against the published entry ('spillway',
// its generated declarations). types.spec.ts type-checks it: every
// `@ts-expect-error` line must be refused, every other line accepted, so a
// type that regresses either way fails the suite. Nothing here runs.

import { bag, Bag, BagItem, Future, AsCompleted, asCompleted, fireAndForget, getClient, rejoin, secede, taskModule, wait, type Client, type SpillwayErrorCode, type ModuleRef } from 'spillway'

type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false
function expectType<T>(_: T): void {}
function same<A, B>(_: Equal<A, B>): void {}

declare const client: Client
const tasks = taskModule<typeof import('../fixtures/tasks/typed.mts')>(new URL('../fixtures/tasks/typed.mts', import.meta.url))

export async function futures(): Promise<void> {
  // submit infers T from the function, awaited, and checks args.
  const sum = client.submit((a: number, b: number) => a + b, [1, 2])
  same<typeof sum, Future<number>>(true)
  const text = client.submit(async (s: string) => s.toUpperCase(), ['a'])
  same<typeof text, Future<string>>(true)
  same<Awaited<ReturnType<typeof text.result>>, string>(true)
  // @ts-expect-error a string where the function takes a number
  client.submit((a: number, b: number) => a + b, [1, 'two'])
  // @ts-expect-error an argument missing
  client.submit((a: number, b: number) => a + b, [1])
  // @ts-expect-error args are required when the function has parameters
  client.submit((a: number) => a)
  client.submit(() => 42)
  client.submit((a: number, b?: number) => a + (b ?? 0), [1])

  // Futures fit where their T does, anywhere in the arguments.
  const next = client.submit((x: number, o: { y: number }) => x + o.y, [sum, { y: sum }])
  same<typeof next, Future<number>>(true)
  // @ts-expect-error a Future<string> where a number goes
  client.submit((x: number) => x, [text])

  // Typed module references, from the module's own types.
  const parsed = client.submit(tasks.parse, [{ start: 0, end: 10 }, 'first'])
  same<typeof parsed, Future<{ label: string; n: number }>>(true)
  const all = client.submit(tasks.total, [[parsed, parsed]])
  same<typeof all, Future<number>>(true)
  // @ts-expect-error parse takes a Slice, not a string
  client.submit(tasks.parse, ['0-10', 'first'])
  // @ts-expect-error no such export
  client.submit(tasks.prase, [])
  // A plain { module, name } is still accepted, untyped.
  const plain = client.submit({ module: '/abs/tasks.mjs', name: 'double' }, [21])
  same<typeof plain, Future<any>>(true)
  const ref: ModuleRef = { module: new URL('file:///abs/tasks.mjs') }
  client.submit(ref, [1, 'anything'])

  // map gives one Future per item.
  const doubled = client.map((x: number) => x * 2, [1, 2, 3])
  same<typeof doubled, Future<number>[]>(true)
  // @ts-expect-error items must fit the parameter
  client.map((x: number) => x * 2, ['1'])
  const lens = client.map(tasks.words, ['a b', 'c'])
  same<typeof lens, Future<string[]>[]>(true)

  // gather maps the shape it is given.
  const one = await client.gather(sum)
  same<typeof one, number>(true)
  const list = await client.gather(doubled)
  same<typeof list, number[]>(true)
  const tuple = await client.gather([sum, text])
  same<typeof tuple, [number, string]>(true)
  const obj = await client.gather({ a: sum, b: [text], c: 3 })
  same<typeof obj, { a: number; b: [string]; c: 3 }>(true)
  // @ts-expect-error a gathered number used as a string
  tuple[0].toUpperCase()
  // @ts-expect-error a gathered string used as a number
  const wrong: number = obj.b[0]

  // scatter, wait and asCompleted keep T.
  const big = await client.scatter({ rows: [1, 2], name: 'x' })
  same<typeof big, Future<{ rows: number[]; name: string }>>(true)
  const { done, notDone } = await wait(doubled)
  same<typeof done, Future<number>[]>(true)
  same<typeof notDone, Future<number>[]>(true)
  for await (const f of asCompleted([sum])) same<typeof f, Future<number>>(true)
  void wrong
}

export async function daskClient(): Promise<void> {
  const sum = client.submit((a: number, b: number) => a + b, [1, 2])
  const text = client.submit(async (s: string) => s.toUpperCase(), ['a'])

  // map over several iterables: one argument per iterable, options last.
  const pairs = client.map((a: number, b: string) => b.repeat(a), [1, 2], ['x', 'y'])
  same<typeof pairs, Future<string>[]>(true)
  const batched = client.map((a: number, b: string) => b.repeat(a), [1, 2], new Set(['x', 'y']), { batchSize: 1, pure: true })
  same<typeof batched, Future<string>[]>(true)
  const one = client.map((x: number) => x * 2, [1, 2], { batchSize: 2 })
  same<typeof one, Future<number>[]>(true)
  client.map((a: number, b: number) => a + b, [sum], [1])
  // @ts-expect-error the second iterable must hold strings
  client.map((a: number, b: string) => b.repeat(a), [1, 2], [3, 4])
  // @ts-expect-error batchSize is a number
  client.map((x: number) => x, [1], { batchSize: '2' })

  // scatter: an array gives a Future per element; an object stays one value unless split.
  const parts = await client.scatter([1, 2, 3])
  same<typeof parts, Future<number>[]>(true)
  const whole = await client.scatter([1, 2, 3], { split: false })
  same<typeof whole, Future<number[]>>(true)
  const bytes = await client.scatter(new Float64Array(4), { hash: false, broadcast: true })
  same<typeof bytes, Future<Float64Array<ArrayBuffer>>>(true)
  const dict = await client.scatter({ a: 1, b: 'x' }, { split: true })
  same<typeof dict, { a: Future<number>; b: Future<string> }>(true)
  const kept = await client.scatter({ a: 1 })
  same<typeof kept, Future<{ a: number }>>(true)
  // @ts-expect-error hash is true or false
  await client.scatter(1, { hash: 'yes' })

  // gather with errors, retry, done callbacks, fireAndForget.
  const some = await client.gather([sum, sum], { errors: 'skip' })
  same<typeof some, [number, number]>(true)
  // @ts-expect-error errors is 'raise' or 'skip'
  await client.gather([sum], { errors: 'ignore' })
  sum.retry()
  client.retry([sum, text])
  sum.addDoneCallback((f) => same<typeof f, Future<number>>(true))
  fireAndForget([sum, { t: text }])

  // AsCompleted: add while iterating, results, batches.
  const ac = new AsCompleted([sum])
  ac.add(sum)
  ac.update([sum])
  const n: number = ac.count()
  const empty: boolean = ac.isEmpty()
  for await (const f of ac) same<typeof f, Future<number>>(true)
  for await (const [f, v] of asCompleted([sum], { withResults: true })) {
    same<typeof f, Future<number>>(true)
    same<typeof v, number>(true)
  }
  for await (const batch of new AsCompleted([text]).batches()) same<typeof batch, Future<string>[]>(true)
  for await (const batch of new AsCompleted([text], { withResults: true }).batches()) same<typeof batch, [Future<string>, string][]>(true)
  // @ts-expect-error add takes a Future of the same type
  new AsCompleted([sum]).add(text)
  void n
  void empty
}

export async function bags(): Promise<void> {
  const lines = bag.readText('/data/*.txt')
  same<typeof lines, Bag<string>>(true)
  const words = lines.flatMap((l: string) => l.split(' '))
  same<typeof words, Bag<string>>(true)
  const lengths = words.map((w: string) => w.length)
  same<typeof lengths, Bag<number>>(true)
  // @ts-expect-error the items are strings, not numbers
  words.map((n: number) => n + 1)
  const scaled = lengths.map((n: number, k: number) => n * k, 3)
  same<typeof scaled, Bag<number>>(true)
  // @ts-expect-error the extra argument is a number
  lengths.map((n: number, k: number) => n * k, 'three')
  same<typeof lengths.filter, Bag<number>['filter']>(true)
  const viaModule = lines.flatMap(tasks.words)
  same<typeof viaModule, Bag<string>>(true)

  const people = bag.fromSequence([{ name: 'a', age: 3 }])
  const ages = people.pluck('age')
  same<typeof ages, Bag<number>>(true)
  // @ts-expect-error no such field
  people.pluck('height')
  const byName = people.groupBy('name')
  same<typeof byName, Bag<[string, { name: string; age: number }[]]>>(true)
  const byDecade = people.groupBy((p: { age: number }) => Math.floor(p.age / 10))
  same<typeof byDecade, Bag<[number, { name: string; age: number }[]]>>(true)
  const freq = words.frequencies({ splitOut: 4 })
  same<typeof freq, Bag<[string, number]>>(true)
  const folded = people.foldBy((p: { name: string }) => p.name, (acc: number, p: { age: number }) => acc + p.age, 0)
  same<typeof folded, Bag<[string, number]>>(true)
  const total = ages.sum()
  same<typeof total, BagItem<number>>(true)
  const n = await client.compute(total)
  same<typeof n, number>(true)
  const items = await client.compute(ages)
  same<typeof items, number[]>(true)
  const red = ages.reduction((xs: Iterable<number>) => Math.max(...xs), (ps: number[]) => Math.max(...ps))
  same<typeof red, BagItem<number>>(true)

  // Async steps: the promise's value is the item; options as a last argument.
  const fetched = words.map(async (w: string) => w.length, { concurrency: 8 })
  same<typeof fetched, Bag<number>>(true)
  const promised = words.map((w: string) => Promise.resolve(w.length))
  same<typeof promised, Bag<number>>(true)
  const kept = words.filter(async (w: string) => w.length > 2, { concurrency: 2 })
  same<typeof kept, Bag<string>>(true)
  const spread = words.flatMap(async function* (w: string) { yield w.length })
  same<typeof spread, Bag<number>>(true)
  const byAsyncKey = people.groupBy(async (p: { age: number }) => p.age > 18, { concurrency: 4 })
  same<typeof byAsyncKey, Bag<[boolean, { name: string; age: number }[]]>>(true)
  const foldedAsync = people.foldBy(async (p: { name: string }) => p.name, async (acc: number, p: { age: number }) => acc + p.age, 0)
  same<typeof foldedAsync, Bag<[string, number]>>(true)
  // @ts-expect-error concurrency is a number
  words.map(async (w: string) => w, { concurrency: 'many' })
  const ac = new AbortController()
  const aborted = await client.compute(fetched, { signal: ac.signal })
  same<typeof aborted, number[]>(true)
  await client.gather([client.submit((x: number) => x, [1])], { signal: ac.signal })
  await wait([], { signal: AbortSignal.timeout(10) })
  // @ts-expect-error a signal is an AbortSignal
  await client.compute(fetched, { signal: 'stop' })
}

export async function inTask(): Promise<number> {
  // A task's own client is typed as a client's is.
  const c = getClient()
  const f = c.submit((a: number, b: number) => a + b, [1, 2])
  same<typeof f, Future<number>>(true)
  // @ts-expect-error a string where the function takes a number
  c.submit((a: number) => a, ['x'])
  const parts = c.map((x: number) => String(x), [1, 2])
  same<typeof parts, Future<string>[]>(true)
  const got = await c.gather({ f, parts })
  same<typeof got, { f: number; parts: string[] }>(true)
  await wait(parts)
  secede()
  await rejoin()
  return f.result()
}

export function errors(e: unknown): void {
  if (e instanceof Error && 'code' in e) {
    const code = (e as { code: SpillwayErrorCode }).code
    expectType<SpillwayErrorCode>('ERR_SPILLWAY_TASK')
    // @ts-expect-error not one of spillway's codes
    expectType<SpillwayErrorCode>('ERR_SPILLWAY_NO_SUCH_CODE')
    void code
  }
}
