// Shared by the dashboard specs: a CI-sized cluster with the dashboard on,
// the pressure workload, HTTP reads and a small Prometheus text parser.

import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { random, schedulerWorkers, setupClient, workerInMemoryBytes, workerSpillBytes, type Client, type SetupResult } from 'spillway'

export const CLUSTER = { workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, silenceLogs: true, spillCompression: 'lz4' } as const

export async function dashboardCluster(extra: Record<string, unknown> = {}): Promise<SetupResult> {
  return setupClient({ ...CLUSTER, dashboard: true, ...extra })
}

/** Persists ≈2 GB of random chunks on 2 GiB of workers, so both spill. */
export async function pressure(client: Client) {
  const x = await client.persist(random.random([20_000, 20_000], { chunks: [2_000, 2_000], seed: 1 }))
  await x.wait()
  return x
}

/**
 * Waits until two reads of the scheduler agree on every worker's memory and
 * spill, so later reads compare like with like (spilling goes on briefly
 * after the last chunk lands).
 */
export async function settle(client: Client, tries = 60): Promise<void> {
  const snap = async () =>
    JSON.stringify(Object.entries(await schedulerWorkers(client)).map(([a, w]) => [a, workerInMemoryBytes(w.metrics), workerSpillBytes(w.metrics)]))
  let prev = await snap()
  for (let i = 0; i < tries; i++) {
    await new Promise((r) => setTimeout(r, 300))
    const cur = await snap()
    if (cur === prev) return
    prev = cur
  }
  throw new Error('worker memory did not settle')
}

export interface HttpReply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

export function http(url: string, method = 'GET', headers: Record<string, string> = {}): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}

export interface PromSample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface PromFamily {
  help?: string
  type?: string
  samples: PromSample[]
}

/** Parses text format 0.0.4; throws on a sample whose family has no HELP and TYPE before it. */
export function parseProm(text: string): Map<string, PromFamily> {
  const fams = new Map<string, PromFamily>()
  const fam = (n: string) => fams.get(n) ?? fams.set(n, { samples: [] }).get(n)!
  for (const line of text.split('\n')) {
    if (!line) continue
    let m = /^# (HELP|TYPE) (\w+) (.*)$/.exec(line)
    if (m) {
      if (m[1] === 'HELP') fam(m[2]).help = m[3]
      else fam(m[2]).type = m[3]
      continue
    }
    m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a Prometheus line: ${line}`)
    const f = fams.get(m[1])
    if (!f?.help || !f.type) throw new Error(`sample before its HELP/TYPE: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
    f.samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return fams
}

export function promValue(fams: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  const s = fams.get(name)?.samples.find((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v))
  return s?.value
}

/** Local addresses of TCP sockets listening on `port`, read from /proc/net (Linux). */
export function listeningAddresses(port: number): string[] {
  const out: string[] = []
  for (const [file, v6] of [
    ['/proc/net/tcp', false],
    ['/proc/net/tcp6', true],
  ] as const) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length < 4 || cols[3] !== '0A') continue
      const [hexAddr, hexPort] = cols[1].split(':')
      if (parseInt(hexPort, 16) !== port) continue
      out.push(v6 ? `v6:${hexAddr}` : hexToIPv4(hexAddr))
    }
  }
  return out
}

function hexToIPv4(hex: string): string {
  // /proc prints the address as a little-endian 32-bit word.
  const n = parseInt(hex, 16)
  return [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255].join('.')
}
