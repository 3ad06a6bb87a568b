// The differential suite's runner: one DuckDB in this process and one
// spillway client for every case; a case makes its tables in both engines,
// runs its query in both and asks compare.ts whether the answers agree.
// `differentialTest` is the whole property, shared by the npm-test spec
// (frame-differential.spec.ts) and the scale lane's longer run
// (frame-differential-scale.spec.ts).

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import type { TestFn } from 'ava'
import { frame, type Client, type Frame } from 'spillway'
import { sharedCluster } from '../cluster-helpers'
import { arrowTable, createTableSql, ingest, showTable, SQL_TYPE, tTable, uTable, type Ingest, type TableData } from './tables'
import { build, query, showQuery, T_TYPES, type Built, type Query } from './queries'
import { fromArrow, fromDuck, fromScalar, judgeOutcomes, showOutcome, type Outcome } from './compare'

export interface Case {
  t: TableData
  u: TableData
  tIn: Ingest
  uIn: Ingest
  q: Query
}

export const caseArb: fc.Arbitrary<Case> = fc.record({ t: tTable(40), u: uTable(20), tIn: ingest, uIn: ingest, q: query })

/** A case's disagreement: what a failure prints besides the seed and path. */
export class Disagreement extends Error {}

const CASE_TIMEOUT_MS = 60_000

const errorOutcome = (e: unknown): Outcome => ({ ok: false, code: (e as { code?: string })?.code, message: String((e as Error)?.message ?? e) })

export class Differential {
  #duck!: DuckDBConnection
  #instance!: DuckDBInstance
  #n = 0
  /** Cases run by query kind, and how many both engines refused (an overflow, say): the log says what a run covered. */
  readonly stats = { byKind: {} as Record<string, number>, bothRefused: 0, rows: 0 }

  constructor(
    readonly client: () => Client,
    readonly dir: string,
  ) {}

  async open(): Promise<void> {
    this.#instance = await DuckDBInstance.create(':memory:', { threads: '1' })
    this.#duck = await this.#instance.connect()
    // DuckDB's default makes x / 0 NULL; spillway's divideBy is IEEE float64 division (docs/frame-exact.md).
    await this.#duck.run('SET ieee_floating_point_ops = true')
  }

  close(): void {
    this.#duck?.closeSync()
    this.#instance?.closeSync()
  }

  async #sql(sql: string): Promise<Outcome> {
    try {
      return { ok: true, result: fromDuck(await this.#duck.runAndReadAll(sql)) }
    } catch (e) {
      return errorOutcome(e)
    }
  }

  /** The table in DuckDB as `name`, and as a frame the way a user makes one: fromArrow, or Parquet files DuckDB wrote. */
  async #ingest(name: string, data: TableData, how: Ingest, dir: string): Promise<Frame> {
    if (how.kind === 'arrow') return frame.fromArrow(arrowTable(data), { npartitions: how.npartitions })
    const per = Math.ceil(data.rows.length / how.files)
    const paths: string[] = []
    for (let j = 0; j < how.files; j++) {
      const p = join(dir, `${name}-${j}.parquet`)
      await this.#duck.run(`COPY (SELECT * FROM ${name} WHERE rid >= ${j * per} AND rid < ${(j + 1) * per} ORDER BY rid) TO '${p}' (FORMAT parquet)`)
      paths.push(p)
    }
    // A partition per file (a file's one row group each).
    return frame.readParquet(paths, { blocksize: 1 })
  }

  /** The spillway side's answer: a compute of the frame, slice or scalar the query built. */
  async #spillway(built: Built, c: Case, dir: string): Promise<Outcome> {
    const client = this.client()
    try {
      const t = await this.#ingest('t', c.t, c.tIn, dir)
      const u = c.q.q === 'join' ? await this.#ingest('u', c.u, c.uIn, dir) : t
      const x = built.spillway({ t, u }) as any
      const v = await client.compute(x)
      if (v !== null && typeof v === 'object' && 'numRows' in v) return { ok: true, result: fromArrow(v as any) }
      return { ok: true, result: fromScalar(v) }
    } catch (e) {
      return errorOutcome(e)
    }
  }

  /** A round trip: spillway writes the frame, then spillway and DuckDB each read the files back. */
  async #roundtrip(built: Built, c: Case, dir: string): Promise<{ spillway: Outcome; duckdb: Outcome; paths: string[] }> {
    const { format, columns } = built.roundtrip!
    const out = join(dir, 'out')
    mkdirSync(out)
    let paths: string[]
    try {
      const t = await this.#ingest('t', c.t, c.tIn, dir)
      const f = built.spillway({ t, u: t }) as Frame
      paths = (await this.client().compute(format === 'csv' ? f.toCsv(join(out, 'part-*.csv')) : f.toParquet(join(out, 'part-*.parquet')))) as string[]
    } catch (e) {
      const o = errorOutcome(e)
      return { spillway: o, duckdb: o, paths: [] }
    }
    let spillway: Outcome
    try {
      const back = format === 'csv' ? frame.readCsv(paths, { schema: Object.fromEntries(columns.map((k) => [k, T_TYPES[k] as 'int64'])) }) : frame.readParquet(paths)
      spillway = { ok: true, result: fromArrow(await this.client().compute(back)) }
    } catch (e) {
      spillway = errorOutcome(e)
    }
    const list = `[${paths.map((p) => `'${p}'`).join(', ')}]`
    const types = `{${columns.map((k) => `'${k}': '${SQL_TYPE[T_TYPES[k]]}'`).join(', ')}}`
    const duckdb = await this.#sql(format === 'csv' ? `SELECT * FROM read_csv(${list}, header = true, auto_detect = false, columns = ${types})` : `SELECT * FROM read_parquet(${list})`)
    return { spillway, duckdb, paths }
  }

  /** Undefined where the engines agree on `c`, else a report of the disagreement. */
  async check(c: Case): Promise<string | undefined> {
    const dir = mkdtempSync(join(this.dir, `case-${this.#n++}-`))
    try {
      for (const s of [...createTableSql('t', c.t), ...(c.q.q === 'join' ? createTableSql('u', c.u) : [])]) await this.#duck.run(s)
      const built = build(c.q)
      const expected = await this.#sql(built.sql)
      const report = (why: string, spill: Outcome, what = 'spillway') =>
        [`${why}`, `query: ${showQuery(c.q)}`, `DuckDB: ${built.sql}`, `${what}:`, showOutcome(spill), 'DuckDB:', showOutcome(expected)].join('\n')
      // DuckDB's Parquet writer keeps one dictionary entry for -0.0 and 0.0 (equal values): a table that reaches spillway through its files may hold either sign where DuckDB's own rows hold the other.
      const viaParquet = c.tIn.kind === 'parquet' || (c.q.q === 'join' && c.uIn.kind === 'parquet')
      const judge = viaParquet ? { ...built.judge, looseZero: true } : built.judge
      if (built.roundtrip) {
        const r = await this.#roundtrip(built, c, dir)
        this.#count(c, r.spillway, expected)
        const a = judgeOutcomes(r.spillway, expected, judge)
        if (a) return report(`${a} (the files read back by spillway)`, r.spillway, `spillway, reading ${r.paths.length} file(s) back`)
        const b = judgeOutcomes(r.duckdb, expected, judge)
        if (b) return report(`${b} (the files read back by DuckDB)`, r.duckdb, `DuckDB's read_${built.roundtrip.format} of spillway's ${r.paths.length} file(s)`)
        return undefined
      }
      const spill = await this.#spillway(built, c, dir)
      this.#count(c, spill, expected)
      const why = judgeOutcomes(spill, expected, judge)
      return why === undefined ? undefined : report(why, spill)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  #count(c: Case, spill: Outcome, duck: Outcome): void {
    const kind = c.q.q === 'roundtrip' ? `${c.q.format} round trip` : c.q.q === 'join' ? `${c.q.how} join` : c.q.q
    this.stats.byKind[kind] = (this.stats.byKind[kind] ?? 0) + 1
    if (!spill.ok && !duck.ok) this.stats.bothRefused++
    if (duck.ok) this.stats.rows += duck.result.rows.length
  }

  /** `check` with a time limit: a case that hangs is a disagreement too. */
  async checkInTime(c: Case): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no answer from spillway within ${CASE_TIMEOUT_MS / 1000} s`), CASE_TIMEOUT_MS)))
    try {
      return await Promise.race([this.check(c), late])
    } finally {
      clearTimeout(timer)
    }
  }
}

export interface DifferentialSettings {
  /** Cases to run (SPILLWAY_DIFF_RUNS overrides). */
  runs: number
  /** fast-check's seed (SPILLWAY_DIFF_SEED overrides; undefined: a new one, printed). */
  seed?: number
}

/** A failure's report: the seed and path to replay it, the shrunk tables and query, both answers. */
export function failureReport(details: fc.RunDetails<[Case]>, file: string): string {
  const c = details.counterexample?.[0]
  const err = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
  return [
    `spillway and DuckDB disagree after ${details.numRuns} case(s) (${details.numShrinks} shrinks).`,
    `seed: ${details.seed}  path: ${details.counterexamplePath}`,
    `replay: SPILLWAY_DIFF_SEED=${details.seed} SPILLWAY_DIFF_PATH=${details.counterexamplePath} npx ava ${file}`,
    ...(c ? [showTable('t', c.t), `t reaches spillway by ${JSON.stringify(c.tIn)}`, ...(c.q.q === 'join' ? [showTable('u', c.u), `u reaches spillway by ${JSON.stringify(c.uIn)}`] : [])] : []),
    err,
  ].join('\n')
}

/** The property as one ava test on one shared cluster: `runs` generated cases, seeded. */
export function differentialTest(test: TestFn, file: string, settings: DifferentialSettings): void {
  let client!: Client
  sharedCluster(test, (c) => (client = c))
  const dir = mkdtempSync(join(tmpdir(), 'spillway-differential-'))
  const diff = new Differential(() => client, dir)
  test.before(() => diff.open())
  test.after.always(() => {
    diff.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const env = process.env
  const runs = env.SPILLWAY_DIFF_RUNS ? Number(env.SPILLWAY_DIFF_RUNS) : settings.runs
  const seed = env.SPILLWAY_DIFF_SEED ? Number(env.SPILLWAY_DIFF_SEED) : (settings.seed ?? (Date.now() ^ (Math.random() * 2 ** 31)) | 0)
  const path = env.SPILLWAY_DIFF_PATH || undefined

  test.serial(`spillway's frames answer as DuckDB over ${runs} generated tables and queries (seed ${seed})`, async (t) => {
    t.timeout(Math.max(180_000, runs * 2_000))
    const started = Date.now()
    const property = fc.asyncProperty(caseArb, async (c) => {
      const why = await diff.checkInTime(c)
      if (why !== undefined) throw new Disagreement(why)
    })
    const details = await fc.check(property, { numRuns: runs, seed, ...(path ? { path } : {}), endOnFailure: false })
    t.log(`${details.numRuns} cases, seed ${seed}, ${((Date.now() - started) / 1000).toFixed(1)} s; ${diff.stats.rows} result rows from DuckDB, ${diff.stats.bothRefused} refused by both`)
    t.log(Object.entries(diff.stats.byKind).sort().map(([k, n]) => `${k} ${n}`).join(', '))
    if (details.failed) t.fail(failureReport(details, file))
    else t.pass()
  })
}
