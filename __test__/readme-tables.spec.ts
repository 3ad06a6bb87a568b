// The README's Tables program is examples/analysis.js, prints what the README
// shows, and leaves Parquet that another reader takes as written: DuckDB (as
// the README runs it) where a Python with duckdb is here, hyparquet (with
// zstd-napi for the zstd pages spillway writes by default) always.
import test from 'ava'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parquetReadObjects } from 'hyparquet'
import { decompress } from 'zstd-napi'
import { ROOT, fencedBlock, readDoc } from './docs-helpers'

function duckdbPython(): string | undefined {
  for (const python of [join(ROOT, 'bench', '.venv', 'bin', 'python'), 'python3']) {
    if (spawnSync(python, ['-c', 'import duckdb'], { stdio: 'ignore' }).status === 0) return python
  }
  return undefined
}

test('the README’s Tables program is examples/analysis.js; it prints what the README shows and its Parquet reads back as written', async (t) => {
  const readme = readDoc('README.md')
  const code = fencedBlock(readme, '<!-- tables-program -->')
  t.is(readFileSync(join(ROOT, 'examples', 'analysis.js'), 'utf8').trim(), code.trim())
  const expected = fencedBlock(readme, '<!-- tables-output -->')
  const dir = mkdtempSync(join(tmpdir(), 'readme-tables-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const out = execFileSync(process.execPath, [join(ROOT, 'examples', 'analysis.js')], { cwd: dir, encoding: 'utf8', timeout: 120_000 })
  t.is(out, `${expected}\n`)

  const rows = expected.split('\n').map((l) => l.split(' '))
  const files = readdirSync(join(dir, 'report')).filter((f) => f.endsWith('.parquet')).sort()
  t.true(files.length >= 1)
  const read: Record<string, unknown>[] = []
  for (const f of files) {
    const buf = readFileSync(join(dir, 'report', f))
    read.push(...((await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), compressors: { ZSTD: (input: Uint8Array) => new Uint8Array(decompress(input)) } })) as Record<string, unknown>[]))
  }
  t.deepEqual(
    read.map((r) => [r.customer, r.country, String(r.orders), String(r.total), String(r.biggest)]),
    rows,
    'hyparquet reads the rows the program printed, in its order',
  )

  const python = duckdbPython()
  if (!python) {
    t.log('no Python with duckdb here: the README’s DuckDB line was not run (hyparquet read the files)')
    return
  }
  const line = fencedBlock(readme, '<!-- tables-readback -->')
  const script = /^python -c "(.*)"$/.exec(line.trim())
  if (!script) return t.fail(`the readback block is not one python -c line: ${line}`)
  const duck = execFileSync(python, ['-c', script[1].replace(/\\"/g, '"')], { cwd: dir, encoding: 'utf8', timeout: 60_000 })
  const tuples = rows.map(([c, k, n, total]) => `('${c}', '${k}', ${n}, ${Number.isInteger(Number(total)) ? `${total}.0` : total})`)
  t.is(duck.trim(), `[${tuples.join(', ')}]`)
})
