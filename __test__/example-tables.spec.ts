// docs/frames.md's example is examples/tables.js, and prints what the page says.
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { section } from './docs-helpers'

test('examples/tables.js is docs/frames.md\'s program and prints what the page says', (t) => {
  const root = join(__dirname, '..')
  const page = section('frames.md', '# Tables: frames')
  const code = page.slice(page.indexOf('```js\n') + 6, page.indexOf('\n```', page.indexOf('```js\n')))
  t.is(readFileSync(join(root, 'examples', 'tables.js'), 'utf8').trim(), code.trim())
  const printed = page.slice(page.indexOf('It prints'))
  const block = printed.slice(printed.indexOf('```\n') + 4, printed.indexOf('\n```', printed.indexOf('```\n') + 4))
  const out = execFileSync(process.execPath, [join(root, 'examples', 'tables.js')], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  t.is(out.trim(), block.trim())
})
