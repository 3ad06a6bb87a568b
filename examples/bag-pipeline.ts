// Your data in partitions: a log analysis with bags over files this example
// writes itself (NDJSON request logs, a CSV of users, a Parquet file of
// trips), on two workers. docs/bags.md shows this
// code and what it prints.
//
//   npx tsx examples/bag-pipeline.ts

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parquetWriteFile } from 'hyparquet-writer' // a devDependency, only to write the example's file
import { bag, setupClient } from 'spillway'

// ---- the files: 8 days of request logs, one JSON object a line ----
const dir = mkdtempSync(join(tmpdir(), 'spillway-bag-example-'))
mkdirSync(join(dir, 'logs'))
let seed = 7
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
const paths = ['/', '/search', '/cart', '/checkout', '/api/items', '/api/users']
for (let day = 1; day <= 8; day++) {
  const lines: string[] = []
  for (let i = 0; i < 5000; i++) {
    const path = paths[Math.floor(rand() ** 2 * paths.length)]
    const level = rand() < 0.04 ? 'ERROR' : 'INFO'
    lines.push(JSON.stringify({ day, user: `u${Math.floor(rand() * 50)}`, path, level, bytes: Math.floor(rand() * 10_000) }))
  }
  writeFileSync(join(dir, 'logs', `day-${day}.ndjson`), lines.join('\n') + '\n')
}
writeFileSync(join(dir, 'users.csv'), 'user,plan\n' + Array.from({ length: 50 }, (_, i) => `u${i},${i % 5 === 0 ? 'pro' : 'free'}`).join('\n') + '\n')
const ids = Array.from({ length: 3000 }, (_, i) => i)
parquetWriteFile({
  filename: join(dir, 'trips.parquet'),
  columnData: [
    { name: 'id', data: ids, type: 'INT32' },
    { name: 'km', data: ids.map((i) => (i % 40) / 2), type: 'DOUBLE' },
  ],
  rowGroupSize: 1000,
})

async function main() {
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false, silenceLogs: true })
  try {
    // ---- the analysis ----
    const lines = bag.readText(join(dir, 'logs', '*.ndjson'), { blocksize: '256 KiB' })
    console.log(`${lines.npartitions} partitions of lines`)
    const events = lines.map(JSON.parse)
    const errors = events.filter((e: { level: string }) => e.level === 'ERROR')
    console.log('requests:', await client.compute(events.count()))
    console.log('errors:', await client.compute(errors.count()))
    console.log('errors by path:', await client.compute(errors.pluck('path').frequencies()))
    console.log('top 3 paths:', await client.compute(events.pluck('path').frequencies().topk(3, (kv: [string, number]) => kv[1])))
    const bytesByUser = events.foldBy('user', (acc: number, e: { bytes: number }) => acc + e.bytes, 0, { combine: (a: number, b: number) => a + b })
    console.log('heaviest user:', await client.compute(bytesByUser.topk(1, (kv: [string, number]) => kv[1])))

    // Held on the workers (spilled if need be): the next passes read no file.
    const kept = await client.persist(errors)
    console.log('error bytes, mean:', Math.round(await client.compute(kept.pluck('bytes').mean())))
    console.log('users with errors:', (await client.compute(kept.pluck('user').distinct())).length)
    const written = await client.compute(kept.map(JSON.stringify).toTextfiles(join(dir, 'errors', 'part-*.ndjson.gz')))
    console.log(`wrote ${written.length} files, the first ${written[0].slice(dir.length)}`)
    kept.release()

    // ---- CSV and Parquet ----
    const users = bag.readCsv(join(dir, 'users.csv'))
    console.log('pro users:', await client.compute(users.filter((u: { plan: string }) => u.plan === 'pro').count()))
    const trips = bag.readParquet(join(dir, 'trips.parquet'), { columns: ['km'] })
    console.log(`${trips.npartitions} row groups, km total:`, await client.compute(trips.pluck('km').sum()))
  } finally {
    await client.close()
    await cluster.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
