// TypeScript task modules run on the workers as they are: through the
// running Node's own type stripping where it has it, else through amaro's
// (Node 20, and 22 before 22.18). .ci/run also runs this file on Node 22,
// 24 and 26 (scripts/node-matrix.sh), so both paths are exercised.
import test from 'ava'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bag, taskModule, type Client } from 'spillway'
import { sharedCluster } from './cluster-helpers'
import type * as Typed from './fixtures/tasks/typed.mts'

const FIX = join(__dirname, 'fixtures', 'tasks')
const strips = Boolean((process.features as { typescript?: unknown }).typescript)

// One cluster for every test (the same workers as cluster()'s): none changes
// its workers; the tests run one at a time.
let client!: Client
sharedCluster(test, (c) => (client = c), { reserveMemGb: 1 })

test.serial(`a .mts module through taskModule, typed, on Node ${process.version} (${strips ? "Node's own" : "amaro's"} type stripping)`, async (t) => {
  const tasks = taskModule<typeof Typed>(pathToFileURL(join(FIX, 'typed.mts')))
  t.false('then' in tasks, 'a task module is not a thenable')
  t.deepEqual(tasks.parse, { module: pathToFileURL(join(FIX, 'typed.mts')).href, name: 'parse' })
  const parsed = client.submit(tasks.parse, [{ start: 2, end: 9 }, 'a'])
  const total = client.submit(tasks.total, [[parsed, parsed]])
  t.deepEqual(await parsed.result(), { label: 'a', n: 7 })
  t.is(await total.result(), 14)
  // The workers run this very Node, not a compiled copy under another.
  t.is(await client.submit(tasks.nodeVersion).result(), process.version)
  const words = await client.compute(bag.fromSequence(['a b', 'c d e'], { npartitions: 2 }).flatMap(tasks.words).count())
  t.is(words, 5)
})

test.serial('.cts (CommonJS) and .ts (package type "module") modules; a module Node cannot strip fails with ERR_SPILLWAY_TYPESCRIPT naming it', async (t) => {
  t.is(await client.submit({ module: join(FIX, 'typed-cjs.cts'), name: 'product' }, [{ a: 6, b: 7 }]).result(), 42)
  t.is(await client.submit({ module: join(FIX, 'ts-esm', 'shout.ts') }, ['hi']).result(), 'HI!')
  const err = await t.throwsAsync(() => client.submit({ module: join(FIX, 'typed-enum.mts'), name: 'pick' }).result(), { code: 'ERR_SPILLWAY_TYPESCRIPT' })
  t.regex(err!.message, /typed-enum\.mts/)
  t.regex(err!.message, /enum/)
  // The worker is not lost over it: the next task runs.
  t.is(await client.submit((x: number) => x + 1, [1]).result(), 2)
})

test.serial('taskModule refuses a relative path, naming the field', (t) => {
  t.throws(() => taskModule('./tasks.mts'), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT', message: /module.*absolute path/s })
  t.throws(() => taskModule(new URL('https://example.invalid/tasks.mjs')), { code: 'ERR_SPILLWAY_INVALID_ARGUMENT' })
})
