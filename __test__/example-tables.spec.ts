// The README's "Tables" example is examples/tables.js, and prints what the README says.
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

test('examples/tables.js is the README\'s "Tables" program and prints what the README says', (t) => {
  const root = join(__dirname, '..')
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Tables'))
  const code = section.slice(section.indexOf('```js\n') + 6, section.indexOf('\n```', section.indexOf('```js\n')))
  t.is(readFileSync(join(root, 'examples', 'tables.js'), 'utf8').trim(), code.trim())
  const printed = section.slice(section.indexOf('It prints'))
  const block = printed.slice(printed.indexOf('```\n') + 4, printed.indexOf('\n```', printed.indexOf('```\n') + 4))
  const out = execFileSync(process.execPath, [join(root, 'examples', 'tables.js')], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  t.is(out.trim(), block.trim())
})
