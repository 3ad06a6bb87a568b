// examples/bag-pipeline.ts runs as docs/bags.md prints it: its output is the
// page's, line for line.
import test from 'ava'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { section } from './docs-helpers'

const ROOT = join(__dirname, '..')

test('examples/bag-pipeline.ts prints what docs/bags.md says it prints', async (t) => {
  const page = section('bags.md', '# Your data in partitions: bags')
  const printed = /It prints[\s\S]*?```text\n([\s\S]*?)```/.exec(page)
  if (!printed) return t.fail('docs/bags.md has no printed output for the example')
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', 'bag-pipeline.ts')], { cwd: ROOT, timeout: 60_000 }, (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out)))
  })
  t.is(stdout, printed[1])
  // The page's code is the example's: every line of its analysis is in the example file.
  const code = /```ts\n([\s\S]*?)```/.exec(page)![1]
  const example = readFileSync(join(ROOT, 'examples', 'bag-pipeline.ts'), 'utf8')
  const lines = code.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('//'))
  t.true(lines.length > 20)
  for (const line of lines) t.true(example.includes(line), `docs/bags.md line not in the example: ${line}`)
})
