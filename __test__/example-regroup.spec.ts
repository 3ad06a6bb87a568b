// examples/regroup.ts runs as the README prints it.
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

test('examples/regroup.ts prints what the README says it prints', (t) => {
  const root = join(__dirname, '..')
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'examples', 'regroup.ts')], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Regrouping data'))
  const printed = section.slice(section.indexOf('It prints:'))
  const block = printed.slice(printed.indexOf('```\n') + 4, printed.indexOf('\n```', printed.indexOf('```\n') + 4))
  t.is(out.trim(), block.trim())
})
