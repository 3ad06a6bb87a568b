// The README and docs/ as a reader meets them: the README's first program is
// examples/starter.js and prints what the README shows; every link leads to
// a file (and heading) that is there; every error code is in the table.
import test from 'ava'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { ERROR_CODES } from 'spillway'
import { ROOT, fencedBlock, readDoc } from './docs-helpers'

test('the README’s first program is examples/starter.js, and it prints on stdout exactly what the README shows', async (t) => {
  const readme = readDoc('README.md')
  const code = fencedBlock(readme, '<!-- first-program -->')
  t.is(readFileSync(join(ROOT, 'examples', 'starter.js'), 'utf8').trim(), code.trim())
  const expected = fencedBlock(readme, '<!-- first-program-output -->')
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(process.execPath, [join(ROOT, 'examples', 'starter.js')], { cwd: ROOT, timeout: 90_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr })))
  })
  t.is(stdout, `${expected}\n`)
  t.regex(stderr, /\[spillway\] Configuration summary/, 'the summary goes to stderr, as the README says')
})

test('the README is short: at most 200 lines, install and a first program before anything else, and a link to every docs page', (t) => {
  const readme = readDoc('README.md')
  t.true(readme.split('\n').length <= 200, `${readme.split('\n').length} lines`)
  const headings = readme.split('\n').filter((l) => l.startsWith('## '))
  t.deepEqual(headings.slice(0, 2), ['## Install', '## A first program'])
  t.true(readme.includes('(docs/README.md)'))
  for (const page of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && !['README.md', 'api.md', 'develop.md'].includes(f))) {
    t.true(readme.includes(`(docs/${page})`), `the README links docs/${page}`)
  }
})

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

function headingsOf(file: string): Set<string> {
  const out = new Set<string>()
  let fence = false
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    if (l.trimStart().startsWith('```')) fence = !fence
    const m = !fence && /^#{1,6} (.*)$/.exec(l)
    if (m) out.add(anchor(m[1]))
  }
  return out
}

// Pages other branches write; the index links them before they land.
const PENDING = new Set(['docs/async-and-abort.md', 'docs/bags-io.md', 'docs/frames-results.md'])

test('every relative link of the README, docs/ and examples/README.md leads to a file that is there, and to a heading it has', (t) => {
  const pages = ['README.md', 'examples/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  const broken: string[] = []
  let links = 0
  for (const page of pages) {
    const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      links++
      const [path, hash] = target.split('#')
      const file = path ? join(ROOT, dirname(page), path) : join(ROOT, page)
      const rel = relative(ROOT, file)
      if (!existsSync(file)) {
        if (!PENDING.has(rel)) broken.push(`${page}: ${target}`)
        continue
      }
      if (hash && !headingsOf(file).has(hash)) broken.push(`${page}: ${target} (no such heading)`)
    }
  }
  t.true(links > 30, `${links} links checked`)
  t.deepEqual(broken, [])
})

test('docs/troubleshooting.md’s table has a row for every error code, and no code that does not exist', (t) => {
  const page = readDoc('troubleshooting.md')
  const table = page.slice(page.indexOf('## Error codes'))
  const rows = [...table.matchAll(/^\| `(ERR_SPILLWAY_[A-Z_]+)` \|/gm)].map((m) => m[1])
  t.deepEqual([...rows].sort(), [...ERROR_CODES].sort())
})
