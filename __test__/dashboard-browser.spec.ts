import test from 'ava'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import { schedulerWorkers, workerSpillBytes } from 'spillway'
import { testBrowser } from './browser'
import { dashboardCluster, pressure } from './dashboard-helpers'

const ARTIFACT = join(__dirname, 'artifacts', 'dashboard.png')
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

test('the page shows every worker spilling, live, in headless Chromium', async (t) => {
  const browser = testBrowser()
  t.log(`browser: ${browser.source}`)
  const s = await dashboardCluster()
  t.teardown(() => s.cluster.close())
  // Playwright takes the profile directory itself rather than as --user-data-dir.
  const profile = mkdtempSync(join(tmpdir(), 'spillway-chromium-'))
  t.teardown(() => rmSync(profile, { recursive: true, force: true }))
  let context: BrowserContext | undefined
  t.teardown(async () => {
    await context?.close()
  })
  context = await chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    env: { ...process.env, ...browser.env } as Record<string, string>,
    headless: true,
    args: [...ARGS, ...browser.args],
    viewport: { width: 1200, height: 1000 },
    timeout: 60_000,
  })
  const page = context.pages()[0] ?? (await context.newPage())
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`)
  })
  await page.goto(s.client.dashboardLink!, { waitUntil: 'load', timeout: 30_000 })

  // Before the workload: one row per worker, nothing spilled yet.
  await page.waitForFunction(() => document.querySelectorAll('.worker[data-address^="ipc:"]').length === 2, undefined, { timeout: 30_000 })
  const before = await page.$$eval('.worker', (rows) => rows.map((r) => Number((r as HTMLElement).dataset.spilledBytes)))
  t.deepEqual(before, [0, 0])
  const liveSince = await page.evaluate(() => Number(document.body.dataset.updatedAt))

  // The page must follow the workload without a reload.
  await pressure(s.client)
  await page.waitForFunction(
    () => {
      const rows = Array.from(document.querySelectorAll<HTMLElement>('.worker'))
      return rows.length === 2 && rows.every((r) => r.dataset.address && Number(r.dataset.spilledBytes) > 0)
    },
    undefined,
    { timeout: 60_000, polling: 250 },
  )
  await page.waitForFunction(() => /100 in memory/.test(document.querySelector('#tasks .total')?.textContent ?? ''), undefined, { timeout: 30_000 })

  const rows = await page.$$eval('.worker', (els) =>
    els.map((e) => {
      const r = e as HTMLElement
      return {
        address: r.dataset.address!,
        status: r.dataset.status!,
        spilled: Number(r.dataset.spilledBytes),
        memory: Number(r.dataset.memoryBytes),
        rss: Number(r.dataset.rssBytes),
        marks: r.querySelectorAll('.mark').length,
      }
    }),
  )
  const workers = await schedulerWorkers(s.client)
  t.deepEqual(rows.map((r) => r.address).sort(), Object.keys(workers).sort())
  for (const r of rows) {
    t.true(r.spilled > 0, `${r.address} shows spill`)
    t.true(r.memory > 0 && r.rss > 0, `${r.address} shows memory and RSS`)
    t.is(r.status, 'running')
    t.is(r.marks, 4, 'marks at target, spill, pause, terminate')
    t.true(workerSpillBytes(workers[r.address].metrics) > 0)
  }
  t.true((await page.evaluate(() => Number(document.body.dataset.updatedAt))) > liveSince, 'updated without a reload')
  t.regex((await page.textContent('#conn')) ?? '', /^live/)
  t.is(await page.textContent('#s-codec'), 'lz4')
  t.is(await page.textContent('#s-spilldir'), s.tempDir)
  t.is(await page.locator('#chart canvas').count(), 1, 'the uPlot timeline is drawn')

  mkdirSync(join(__dirname, 'artifacts'), { recursive: true })
  await page.screenshot({ path: ARTIFACT, fullPage: true })
  t.true(existsSync(ARTIFACT))
  t.deepEqual(problems, [])
})
