// The layout DESIGN.md draws ("Shape"): src/ is a stack of layers, a folder
// imports only from folders below it, the scheduler and the worker share
// only comm/ and wire/, no file circle (not even of types), no file past
// 400 lines. madge reads the imports, as TypeScript resolves them.
import test from 'ava'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import madge from 'madge'

const ROOT = join(__dirname, '..')
const SRC = join(ROOT, 'src')

/**
 * From the top. Folders on one line are side by side: neither imports the
 * other. The CLI is an application of the library: it starts clusters
 * through setup.ts, the composition root, so it sits above it.
 */
const LAYERS: string[][] = [
  ['cli'],
  ['.'],
  ['dashboard'],
  ['reporting'],
  ['jobqueue'],
  ['client'],
  ['frame'],
  ['bag', 'array'],
  ['futures'],
  ['deploy'],
  ['scheduler', 'worker'],
  ['comm'],
  ['wire'],
  ['config'],
  ['native'],
  ['base'],
]

const rank = new Map<string, number>()
LAYERS.forEach((line, i) => line.forEach((f) => rank.set(f, i)))

function folderOf(file: string): string {
  const parts = file.split('/')
  return parts.length === 1 ? '.' : parts[0]
}

async function graph(): Promise<Record<string, string[]>> {
  const result = await madge(SRC, {
    fileExtensions: ['ts'],
    tsConfig: join(ROOT, 'tsconfig.json'),
    // Type-only imports count: a circle of types is still a circle.
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
  })
  return result.obj()
}

test('no import circle between files of src/', async (t) => {
  const result = await madge(SRC, { fileExtensions: ['ts'], tsConfig: join(ROOT, 'tsconfig.json'), detectiveOptions: { ts: { skipTypeImports: false } } })
  t.deepEqual(result.circular(), [])
  // madge skips what it cannot resolve; a skipped import would hide a circle.
  t.deepEqual(result.warnings().skipped, [])
  t.true(Object.keys(result.obj()).length > 50, 'madge found the source files')
})

test('every folder of src/ is a known layer, and imports only from layers below it', async (t) => {
  const deps = await graph()
  const wrong: string[] = []
  for (const [file, imports] of Object.entries(deps)) {
    // The native binding's generated typings sit at the package root.
    if (file.startsWith('..')) continue
    const from = folderOf(file)
    t.true(rank.has(from), `${file} is in a folder DESIGN.md names (${[...rank.keys()].join(', ')})`)
    for (const dep of imports) {
      if (dep.startsWith('..')) continue
      const to = folderOf(dep)
      if (to === from) continue
      const [a, b] = [rank.get(from)!, rank.get(to)!]
      if (!(b > a)) wrong.push(`${file} -> ${dep} (${from}/ may not import ${to}/)`)
    }
  }
  t.deepEqual(wrong, [])
})

test('at most index.ts and setup.ts loose at the top of src/', async (t) => {
  const deps = await graph()
  const loose = Object.keys(deps).filter((f) => !f.includes('/') && !f.startsWith('..')).sort()
  t.deepEqual(loose, ['index.ts', 'setup.ts'])
})

test('no file of src/ past 400 lines', async (t) => {
  const deps = await graph()
  const long = Object.keys(deps)
    .filter((f) => !f.startsWith('..'))
    .map((f) => [f, readFileSync(join(SRC, f), 'utf8').split('\n').length] as const)
    .filter(([, n]) => n > 400)
  t.deepEqual(long, [])
})
