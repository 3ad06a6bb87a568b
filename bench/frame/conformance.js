// Reads the files bench/frame/conformance.py wrote with spillway's frames and
// compares with DuckDB's answers there. Usage (after npm run build:ts):
//   node bench/frame/conformance.js OUTDIR [name-substring]
// Prints one line per file: ok, or each mismatch / error (code and message).
const { readFileSync, mkdtempSync, rmSync } = require('node:fs')
const { join } = require('node:path')
const { tmpdir } = require('node:os')
const { execFileSync } = require('node:child_process')
const { setupClient, frame, col, count, sum } = require('../../dist')

const dir = process.argv[2]
const only = process.argv[3]
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
const py = join(__dirname, '..', '.venv', 'bin', 'python')

const near = (a, b) => a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b)))
const num = (v) => (typeof v === 'bigint' ? Number(v) : v)

function reader(name) {
  const p = join(dir, name)
  if (name.endsWith('.parquet')) return frame.readParquet(p, process.env.CONF_COLUMNS ? { columns: process.env.CONF_COLUMNS.split(',') } : {})
  if (name.endsWith('.csv')) return frame.readCsv(p)
  return frame.readNdjson(p)
}

/** Raw epoch microseconds of a timestamp vector's non-null values: [min, max]. */
function epochRange(vec) {
  const div = { 0: 1e-6, 1: 1e-3, 2: 1, 3: 1e3 }[vec.type.unit]
  let lo = Infinity, hi = -Infinity
  for (const d of vec.data) {
    for (let i = 0; i < d.length; i++) {
      if (d.nullBitmap && d.nullCount > 0 && !((d.nullBitmap[(d.offset + i) >> 3] >> ((d.offset + i) & 7)) & 1)) continue
      const v = Number(d.values[i]) / div
      lo = Math.min(lo, v); hi = Math.max(hi, v)
    }
  }
  return [Math.round(lo), Math.round(hi)]
}

async function check(client, name, want) {
  const bad = []
  const f = reader(name)
  const t = await client.compute(f)
  if (t.numRows !== want.count) bad.push(`rows ${t.numRows} != ${want.count}`)
  for (const [c, w] of Object.entries(want.columns)) {
    const v = t.getChild(c)
    if (!v) { bad.push(`column ${c} missing`); continue }
    const nonnull = v.length - v.nullCount
    if (nonnull !== w.nonnull) bad.push(`${c} (${w.type} → ${v.type}) non-null ${nonnull} != ${w.nonnull}`)
    if (w.sum !== undefined && want.count > 0) {
      try {
        const s = num(await client.compute(f.sum(c)))
        if (!near(s, w.sum)) bad.push(`${c} (${w.type} → ${v.type}) sum ${s} != ${w.sum}`)
      } catch (e) { bad.push(`${c} (${w.type}) sum threw ${e.code}: ${e.message.slice(0, 200)}`) }
    }
    if (w.epoch_us && w.epoch_us[0] !== null) {
      const r = epochRange(v)
      if (r[0] !== w.epoch_us[0] || r[1] !== w.epoch_us[1]) bad.push(`${c} (${w.type} → ${v.type}) epoch_us ${r} != ${w.epoch_us}`)
    }
    if (w.days && w.days[0] !== null) {
      const vals = v.toArray().filter((x) => x !== null).map((x) => Math.round(Number(x instanceof Date ? x.getTime() : x) / 864e5))
      const r = [Math.min(...vals), Math.max(...vals)]
      if (r[0] !== w.days[0] || r[1] !== w.days[1]) bad.push(`${c} (${w.type} → ${v.type}) days ${r} != ${w.days}`)
    }
    if (w.distinct !== undefined && want.count > 0 && !/\[|STRUCT|MAP|BLOB|INTERVAL/.test(w.type)) {
      try {
        const g = await client.compute(f.groupBy(c).agg({ n: count() }))
        const groups = g.numRows - (w.nonnull < want.count ? 1 : 0)
        if (groups !== w.distinct) bad.push(`${c} (${w.type} → ${v.type}) groups ${groups} != ${w.distinct}`)
      } catch (e) { bad.push(`${c} (${w.type}) groupBy threw ${e.code}: ${e.message.slice(0, 200)}`) }
    }
  }
  if (want.filter !== undefined) {
    const n = num(await client.compute(f.filter(col('id').gt(100)).count()))
    if (n !== want.filter) bad.push(`filter count ${n} != ${want.filter}`)
    const g = await client.compute(f.groupBy('g').agg({ s: sum('id') }))
    const got = Object.fromEntries(g.toArray().map((r) => [r.g, num(r.s)]))
    for (const [k, s] of Object.entries(want.groups)) if (!near(got[k], s)) bad.push(`group ${k} sum ${got[k]} != ${s}`)
    const top = await client.compute(f.sortBy('id', { descending: true }).head(3))
    if (want.count >= 3 && num(top.getChild('id').get(0)) !== want.count - 1) bad.push(`sort head ${top.getChild('id').get(0)}`)
    const j = num(await client.compute(f.join(f.select('id'), { on: 'id' }).count()))
    if (j !== want.count) bad.push(`self join ${j} != ${want.count}`)
    await client.compute(f.describe())
  }
  const out = mkdtempSync(join(tmpdir(), 'conf-'))
  try {
    await client.compute(f.toParquet(join(out, 'part-*.parquet')))
    const back = JSON.parse(execFileSync(py, ['-c', `import duckdb,json,sys; print(json.dumps(duckdb.connect().execute("SELECT count(*) FROM read_parquet('${out}/*.parquet')").fetchone()[0]))`]).toString())
    if (back !== want.count) bad.push(`toParquet roundtrip ${back} rows != ${want.count}`)
  } catch (e) { bad.push(`toParquet threw ${e.code}: ${e.message.slice(0, 300)}`) } finally { rmSync(out, { recursive: true, force: true }) }
  return bad
}

async function main() {
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 2, reserveMemGb: 0.5, dashboard: false, silenceLogs: true })
  try {
    for (const [name, want] of Object.entries(manifest)) {
      if (only && !name.includes(only)) continue
      if (want.error) { console.log(`SKIP ${name}: duckdb ${want.error}`); continue }
      try {
        const bad = await check(client, name, want)
        console.log(bad.length ? `FAIL ${name}\n  ${bad.join('\n  ')}` : `ok   ${name}`)
      } catch (e) {
        console.log(`ERR  ${name}: ${e.code} ${String(e.message).slice(0, 400)}`)
      }
    }
  } finally {
    await client.close()
    await cluster.close()
  }
}
main()
