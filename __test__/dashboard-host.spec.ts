import test from 'ava'
import type { SetupResult } from 'spillway'
import { dashboardCluster, http } from './dashboard-helpers'

let s: SetupResult | undefined

test.after.always(async () => {
  await s?.client.close()
  await s?.cluster.close()
})

test('a loopback dashboard answers only to loopback literals and localhost in Host (DNS rebinding)', async (t) => {
  s = await dashboardCluster({ maxWorkers: 1 })
  const port = Number(new URL(s.client.dashboardLink!).port)
  const get = (host: string) => http(`http://127.0.0.1:${port}/api/workers`, 'GET', { Host: host })
  // Each of these can be made to resolve to 127.0.0.1 by whoever owns the name.
  for (const host of [
    `127.evil.example:${port}`,
    '127.evil.example',
    `127.0.0.1.evil.example:${port}`,
    `localhost.evil.example:${port}`,
    `[::1].evil.example:${port}`,
    `127.0.0.1:${port}:${port}`,
  ]) {
    const r = await get(host)
    t.is(r.status, 403, host)
    t.regex(r.body, /localhost only/)
  }
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `127.1.2.3:${port}`, `[::1]:${port}`, 'localhost']) {
    t.is((await get(host)).status, 200, host)
  }
})
