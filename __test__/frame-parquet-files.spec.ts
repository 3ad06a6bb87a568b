// readParquet over many small files: their row groups coalesce into
// partitions of about `blocksize` bytes, across files (a task per tiny file
// cost more than its read), while a row group past the blocksize keeps a
// partition of its own; every answer against the plain-JS rows the files
// were written from, through a filter pushed into the reader and both
// groupBy methods.
import test from 'ava'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { col, count, frame, sum, type Client, type FrameTable } from 'spillway'
import { sharedCluster } from './cluster-helpers'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-pq-files-'))
let client!: Client
sharedCluster(test, (c) => (client = c))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))

interface Row {
  cat: string | null
  x: number
  y: number
}

const FILES = 30
const ROWS = 40
const all: Row[] = []

test.before(async () => {
  const { parquetWriteFile } = await import('hyparquet-writer')
  for (let f = 0; f < FILES; f++) {
    const rs: Row[] = Array.from({ length: ROWS }, (_, k) => {
      const i = f * ROWS + k
      // x rises with the file: the statistics of early files rule them out of x > 900.
      return { cat: i % 7 === 3 ? null : `c${i % 5}`, x: i, y: (i * 13) % 17 }
    })
    all.push(...rs)
    // 4 row groups of 10 rows a file.
    const name = join(dir, `part-${String(f).padStart(3, '0')}.parquet`)
    parquetWriteFile({ filename: name, columnData: (['cat', 'x', 'y'] as const).map((c) => ({ name: c, data: rs.map((r) => r[c]) })), rowGroupSize: 10 })
  }
})

/** Groups sorted by key: a shuffle's outputs come in hash order. */
const sorted = (m: Map<string | null, [number, number]>) => [...m].sort((a, b) => String(a[0]).localeCompare(String(b[0])))

function byCat(t: FrameTable): [string | null, [number, number]][] {
  return sorted(new Map(t.toArray().map((r) => [r.cat as string | null, [Number(r.n), Number(r.s)]])))
}

function want(keep: (r: Row) => boolean): [string | null, [number, number]][] {
  const m = new Map<string | null, [number, number]>()
  for (const r of all.filter(keep)) {
    const g = m.get(r.cat) ?? [0, 0]
    m.set(r.cat, [g[0] + 1, g[1] + r.y])
  }
  return sorted(m)
}

test('small files share partitions up to the blocksize, row groups split at a tiny one; rows in file order either way', async (t) => {
  const glob = join(dir, '*.parquet')
  const one = frame.readParquet(glob)
  t.is(one.npartitions, 1, '30 files of a few KiB: one partition at the default 64 MiB')
  const each = frame.readParquet(glob, { blocksize: 1 })
  t.is(each.npartitions, FILES * 4, 'a row group past the blocksize is a partition of its own')
  const some = frame.readParquet(glob, { blocksize: 2000 })
  t.true(some.npartitions > 1 && some.npartitions < FILES, `${some.npartitions} partitions of a few files each`)
  for (const f of [one, each, some]) {
    const got = await client.compute(f.select('x', 'cat'))
    t.deepEqual([...got.getChild('x')!], all.map((r) => r.x))
    t.deepEqual([...got.getChild('cat')!], all.map((r) => r.cat))
  }
})

test('a filter then a groupBy over coalesced files: the plain-JS answer by tree and by shuffle', async (t) => {
  const glob = join(dir, '*.parquet')
  for (const blocksize of [2000, 64 * 2 ** 20]) {
    const f = frame.readParquet(glob, { blocksize, columns: ['cat', 'x', 'y'] })
    for (const [pred, keep] of [
      [col('x').gt(900), (r: Row) => r.x > 900],
      [col('x').lt(100).or(col('y').eq(3)), (r: Row) => r.x < 100 || r.y === 3],
    ] as const) {
      for (const method of ['tree', 'shuffle'] as const) {
        const got = await client.compute(f.filter(pred).groupBy('cat').agg({ n: count(), s: sum('y') }, { method }))
        t.deepEqual(byCat(got), want(keep), `${pred} by ${method}, blocksize ${blocksize}`)
      }
    }
  }
})
