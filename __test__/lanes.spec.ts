// Every spec runs in exactly one lane of __test__/lanes/lanes.mjs, so no test
// is dropped by `npm test`, `test:scale` or `test:release`, and none runs twice.
import test from 'ava'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(__dirname, '..')

test('each spec file is in exactly one lane, and each lane entry is a spec file', async (t) => {
  const { lanes } = (await import(join(ROOT, '__test__', 'lanes', 'lanes.mjs'))) as { lanes: Record<string, string[]> }
  const specs = readdirSync(join(ROOT, '__test__')).filter((f) => f.endsWith('.spec.ts')).map((f) => f.slice(0, -'.spec.ts'.length))
  const seen = new Map<string, string[]>()
  for (const [lane, names] of Object.entries(lanes)) for (const n of names) seen.set(n, [...(seen.get(n) ?? []), lane])
  t.deepEqual(specs.filter((s) => !seen.has(s)), [], 'specs in no lane')
  t.deepEqual([...seen].filter(([, ls]) => ls.length > 1).map(([s, ls]) => `${s}: ${ls.join(', ')}`), [], 'specs in several lanes')
  t.deepEqual([...seen.keys()].filter((s) => !specs.includes(s)), [], 'lane entries with no spec file')
  t.deepEqual(Object.keys(lanes), ['unit', 'cluster', 'scale', 'release'])
})
