// docs/frames.md's example is examples/tables.js, and prints what the page
// says; the Parquet it writes reads back in DuckDB and Polars as the page
// shows (that part needs bench/.venv, an interop extra).
import test from 'ava'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { section } from './docs-helpers'

test('examples/tables.js is docs/frames.md\'s program, prints what the page says, and its Parquet reads back in DuckDB and Polars', (t) => {
  const root = join(__dirname, '..')
  const page = section('frames.md', '# Tables: frames')
  const code = page.slice(page.indexOf('```js\n') + 6, page.indexOf('\n```', page.indexOf('```js\n')))
  t.is(readFileSync(join(root, 'examples', 'tables.js'), 'utf8').trim(), code.trim())
  const printed = page.slice(page.indexOf('It prints'))
  const block = printed.slice(printed.indexOf('```\n') + 4, printed.indexOf('\n```', printed.indexOf('```\n') + 4))
  const dir = mkdtempSync(join(tmpdir(), 'spillway-tables-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const out = join(dir, 'by-country')
  const stdout = execFileSync(process.execPath, [join(root, 'examples', 'tables.js'), out], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  t.is(stdout.trim(), block.trim())
  t.deepEqual(readdirSync(out), ['part-0.parquet'])
  const python = join(root, 'bench', '.venv', 'bin', 'python')
  if (!existsSync(python)) {
    t.log(`no ${python}: reading the Parquet back in DuckDB and Polars not checked (bench/setup-venv.sh makes it)`)
    return
  }
  // The page's two commands, with its path swapped for this test's.
  const sql = /duckdb -c "(.*)"/.exec(printed)![1].replace('/tmp/by-country', out)
  const duck = execFileSync(python, ['-c', `import duckdb, json, sys; print(json.dumps(duckdb.sql(sys.argv[1]).fetchall()))`, sql], { encoding: 'utf8' })
  t.deepEqual(JSON.parse(duck), [['Norway', 3, 45], ['Peru', 2, 11]])
  const polars = /python -c "(.*)"/.exec(printed)![1].replace('/tmp/by-country', out)
  t.regex(execFileSync(python, ['-c', polars], { encoding: 'utf8' }), /Norway\D+3\D+45\.0\D+15\.0\D+2024[\s\S]*Peru\D+2\D+11\.0\D+5\.5\D+2024/)
})
