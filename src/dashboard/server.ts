// The dashboard's HTTP server (node:http): the page, JSON of the same data,
// Prometheus metrics and a Server-Sent Events stream that pushes every
// timeline sample. Loopback only unless an address is asked for.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { isIP, type AddressInfo } from 'node:net'
import { hostname } from 'node:os'
import type { Client } from '../client/client'
import { ConfigError, SpillwayError } from '../base/errors'
import { ALLOWED_METHODS, EVENTS_PATH, ROUTES, isKnownPath, type RouteContext } from './routes'
import { clusterView } from './state'
import { TimelineSampler, type TimelineOptions } from './timeline'

export interface DashboardOptions extends TimelineOptions {
  /** 0 (the default) takes a free port. */
  port?: number
  /** '127.0.0.1' by default; anything else exposes the dashboard to that network. */
  address?: string
  /** /events streams open at once; more are answered 503 (default 32). */
  maxStreams?: number
}

export const DEFAULT_MAX_STREAMS = 32

export interface Dashboard {
  url: string
  port: number
  address: string
  readonly sampler: TimelineSampler
  /**
   * Views computed for /events: one per tick however many streams listen
   * (and one for a stream that opens before the first tick); streams
   * refused over the cap.
   */
  readonly stats: { viewsComputed: number; streams: number; refusedStreams: number }
  /** Stops the sampler, ends every stream and closes the listener. Harmless twice. */
  close(): Promise<void>
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // uPlot sets inline styles from script; everything else comes from this server.
  'Content-Security-Policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
}

/**
 * Only literals and `localhost` count: a name such as `127.evil.example` can
 * resolve to 127.0.0.1 and must not pass for loopback (DNS rebinding).
 */
export function isLoopback(address: string): boolean {
  const h = address.toLowerCase()
  if (h === 'localhost' || h === '::1' || h === '[::1]') return true
  return isIP(h) === 4 && h.startsWith('127.')
}

/**
 * The host part of a Host header, without its port or IPv6 brackets; '' when
 * the header is missing or malformed, which no check accepts.
 */
function hostOf(header: string | undefined): string {
  if (!header) return ''
  if (header.startsWith('[')) {
    const m = /^\[([^\]]+)\](?::\d*)?$/.exec(header)
    return m ? m[1] : ''
  }
  const m = /^([^:]+)(?::\d*)?$/.exec(header)
  return m ? m[1] : ''
}

export function dashboardUrl(address: string, port: number): string {
  const host = address === '0.0.0.0' || address === '::' ? hostname() : address
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`
}

function plain(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers })
  res.end(res.req.method === 'HEAD' ? undefined : message + '\n')
}

export async function startDashboard(client: Client, options: DashboardOptions = {}): Promise<Dashboard> {
  const address = options.address ?? '127.0.0.1'
  const host = hostname()
  const sampler = new TimelineSampler(client.scheduler, options)
  const ctx: RouteContext = { view: () => clusterView(client, host), timeline: () => sampler.toJSON() }
  const streams = new Set<ServerResponse>()
  const loopbackOnly = isLoopback(address)
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS
  if (!(Number.isSafeInteger(maxStreams) && maxStreams >= 0)) throw new ConfigError([{ field: 'maxStreams', value: maxStreams, allowed: 'an integer ≥ 0' }], 'dashboard')
  const stats = { viewsComputed: 0, streams: 0, refusedStreams: 0 }
  // One event per tick, built once and written to every stream: a view
  // walks every task, and N streams each building their own cost N walks.
  let event: string | undefined
  const update = () => {
    stats.viewsComputed++
    event = `event: update\ndata: ${JSON.stringify({ view: ctx.view(), sample: sampler.latest() ?? null })}\n\n`
    return event
  }
  sampler.onSample(() => {
    if (!streams.size) return void (event = undefined)
    const e = update()
    for (const s of streams) s.write(e)
  })

  const events = (res: ServerResponse, head: boolean) => {
    if (!head && streams.size >= maxStreams) {
      stats.refusedStreams++
      return plain(res, 503, `too many event streams open (${maxStreams}); try again later`, { 'Retry-After': '5' })
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    if (head) return void res.end()
    res.write(`retry: 2000\n\n`)
    res.write(event ?? update())
    streams.add(res)
    stats.streams = streams.size
    res.on('close', () => {
      streams.delete(res)
      stats.streams = streams.size
    })
  }

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET'
    const path = new URL(req.url ?? '/', 'http://dashboard.invalid').pathname
    if (method !== 'GET' && method !== 'HEAD') return plain(res, 405, `${method} not allowed: the dashboard is read-only`, { Allow: ALLOWED_METHODS })
    if (!isKnownPath(path)) return plain(res, 404, `no such page: ${path}`)
    // A page bound to loopback answers only to loopback names, so a web page
    // elsewhere cannot read it through DNS rebinding.
    if (loopbackOnly && !isLoopback(hostOf(req.headers.host))) return plain(res, 403, 'the dashboard answers to localhost only')
    if (path === EVENTS_PATH) return events(res, method === 'HEAD')
    let reply
    try {
      reply = ROUTES[path](ctx)
    } catch (e) {
      return plain(res, 500, `dashboard error: ${(e as Error).message}`)
    }
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': reply.type,
      'Content-Length': String(body.length),
      'Cache-Control': reply.cache === 'static' ? 'public, max-age=300' : 'no-store',
    })
    res.end(method === 'HEAD' ? undefined : body)
  }

  const server = createServer(handle)
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      reject(
        new SpillwayError('ERR_SPILLWAY_DASHBOARD_LISTEN', `the dashboard could not listen on ${address}:${options.port ?? 0}: ${e.code ?? e.message}`, {
          address,
          port: options.port ?? 0,
          errno: e.code,
        }),
      )
    }
    server.once('error', onError)
    server.listen(options.port ?? 0, address, () => {
      server.off('error', onError)
      resolve()
    })
  })
  // Neither the listener nor its streams should keep a finished script alive.
  server.unref()
  sampler.start()
  const port = (server.address() as AddressInfo).port
  let closing: Promise<void> | undefined
  return {
    url: dashboardUrl(address, port),
    port,
    address,
    sampler,
    stats,
    close() {
      closing ??= new Promise<void>((resolve) => {
        sampler.stop()
        for (const s of streams) s.end()
        streams.clear()
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    },
  }
}

/** The lines setupClient prints: the URL, and how to reach it from a laptop. */
export function dashboardBanner(url: string, port: number, address: string, host = hostname()): string {
  const tunnel = isLoopback(address)
    ? // Bound to loopback, the node itself must be the tunnel's end: jump through the login node.
      `ssh -N -L 8787:127.0.0.1:${port} -J <login node> ${host}`
    : `ssh -N -L 8787:${host}:${port} <login node>`
  return [`Dashboard: ${url}`, `  from your machine: ${tunnel}`, `  then open http://localhost:8787`].join('\n')
}
