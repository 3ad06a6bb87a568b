// examples/regroup.ts runs as docs/shuffle.md prints it.
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { section } from './docs-helpers'

test('examples/regroup.ts prints what docs/shuffle.md says it prints', (t) => {
  const root = join(__dirname, '..')
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'examples', 'regroup.ts')], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  const page = section('shuffle.md', '# Regrouping data: the shuffle')
  const printed = page.slice(page.indexOf('It prints:'))
  const block = printed.slice(printed.indexOf('```\n') + 4, printed.indexOf('\n```', printed.indexOf('```\n') + 4))
  t.is(out.trim(), block.trim())
})
