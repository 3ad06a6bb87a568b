// Regrouping data by key with the P2P shuffle: events and users written to
// files here, then grouped, folded, counted, joined and sorted on two
// workers. Run it as `npx tsx examples/regroup.ts`.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bag, clusterReport, setupClient } from 'spillway'

const dir = mkdtempSync(join(tmpdir(), 'spillway-regroup-'))
const USERS = ['ann', 'bob', 'cy', 'dee', 'eve']
for (let f = 0; f < 4; f++) {
  const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ user: USERS[(i + f) % 5], time: f * 5000 + i, bytes: (i * 37) % 1000 }))
  writeFileSync(join(dir, `events-${f}.ndjson`), lines.join('\n') + '\n')
}
writeFileSync(join(dir, 'users.ndjson'), USERS.slice(0, 4).map((id, i) => JSON.stringify({ id, team: i % 2 ? 'red' : 'blue' })).join('\n') + '\n')

async function main() {
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 0.5, dashboard: false, silenceLogs: true })
  try {
    const events = bag.readText(join(dir, 'events-*.ndjson'), { blocksize: '64 KiB' }).map(JSON.parse)
    const users = bag.readText(join(dir, 'users.ndjson')).map(JSON.parse)

    const perUser = await client.compute(events.groupBy('user', { npartitions: 4 }).map(([user, list]: [string, unknown[]]) => [user, list.length]))
    console.log('events per user:', Object.fromEntries([...perUser].sort()))

    const bytes = await client.compute(events.foldBy('user', (a: number, e: any) => a + e.bytes, 0, { combine: (a: number, b: number) => a + b, splitOut: 4 }))
    console.log('bytes per user: ', Object.fromEntries([...bytes].sort()))

    const words = events.map((e: any) => (e.bytes > 500 ? 'large' : 'small'))
    console.log('sizes:          ', Object.fromEntries([...(await client.compute(words.frequencies({ splitOut: 2 })))].sort()))

    const teams = await client.compute(events.join(users, 'user', 'id', { how: 'left' }).map(([e, u]: [any, any]) => u?.team ?? 'none').frequencies())
    console.log('events by team: ', Object.fromEntries([...teams].sort()))

    const latest = await client.compute(events.sortBy('time', { npartitions: 4, descending: true }).pluck('time').take(3))
    console.log('latest times:   ', latest)

    console.log(`shuffled ${((await clusterReport(client)).shuffleGib * 1024).toFixed(1)} MiB between the workers`)
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
