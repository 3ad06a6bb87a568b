// Endpoint addresses: `unix:/path/to.sock` on one machine, `tcp://host:port`
// across machines. Everything above this file only passes addresses around.

import { chmod } from 'node:fs/promises'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { SpillwayError } from '../../errors'

export type Endpoint = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number }

export function parseAddress(address: string): Endpoint {
  if (address.startsWith('unix:')) return { kind: 'unix', path: address.slice(5) }
  const m = /^tcp:\/\/(\[[^\]]+\]|[^:/]+):(\d+)$/.exec(address)
  if (m) return { kind: 'tcp', host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) }
  throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `address ${JSON.stringify(address)} is neither unix:/path nor tcp://host:port`, { address })
}

export function formatAddress(e: Endpoint): string {
  return e.kind === 'unix' ? `unix:${e.path}` : `tcp://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`
}

/** Listens at `address` (port 0 picks one); resolves with the address actually bound. */
export async function listen(address: string, onConnection: (s: Socket) => void): Promise<{ server: Server; address: string }> {
  const e = parseAddress(address)
  const server = createServer({ noDelay: true }, onConnection)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    if (e.kind === 'unix') server.listen(e.path, () => resolve())
    else server.listen(e.port, e.host, () => resolve())
  })
  if (e.kind === 'unix') {
    // The directory is 0700 already; the socket itself is ours alone too.
    await chmod(e.path, 0o600)
    return { server, address }
  }
  const a = server.address()
  const port = typeof a === 'object' && a ? a.port : e.port
  return { server, address: formatAddress({ ...e, port }) }
}

/** Connects to `address`; a host that does not answer within `timeoutMs` (a node gone from the network) is an error. */
export function dial(address: string, timeoutMs = 10_000): Promise<Socket> {
  const e = parseAddress(address)
  return new Promise((resolve, reject) => {
    const s = e.kind === 'unix' ? connect(e.path) : connect({ host: e.host, port: e.port, noDelay: true })
    const timer = setTimeout(() => {
      s.destroy()
      reject(new SpillwayError('ERR_SPILLWAY_TRANSFER', `no answer from ${address} within ${timeoutMs / 1000} s`, { address }))
    }, timeoutMs)
    s.once('connect', () => {
      clearTimeout(timer)
      s.off('error', fail)
      resolve(s)
    })
    const fail = (err: Error) => {
      clearTimeout(timer)
      reject(err)
    }
    s.once('error', fail)
  })
}
