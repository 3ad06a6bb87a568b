// Endpoint addresses: `unix:/path/to.sock` on one machine, `tcp://host:port`
// across machines, `tls://host:port` for TCP inside Node's TLS. Everything
// above this file only passes addresses around.

import { readFileSync } from 'node:fs'
import { chmod } from 'node:fs/promises'
import { connect, createServer, type Server, type Socket } from 'node:net'
import * as tls from 'node:tls'
import { SpillwayError } from '../base/errors'

export type Endpoint = { kind: 'unix'; path: string } | { kind: 'tcp' | 'tls'; host: string; port: number }

/** PEM files for tls:// endpoints: the listener's certificate and key; the CA a dialler trusts (and, given to a listener, asks its peers to prove). */
export interface TlsFiles {
  cert?: string
  key?: string
  ca?: string
}

export function parseAddress(address: string): Endpoint {
  if (address.startsWith('unix:')) return { kind: 'unix', path: address.slice(5) }
  const m = /^(tcp|tls):\/\/(\[[^\]]+\]|[^:/]+):(\d+)$/.exec(address)
  if (m) return { kind: m[1] as 'tcp' | 'tls', host: m[2].replace(/^\[|\]$/g, ''), port: Number(m[3]) }
  throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `address ${JSON.stringify(address)} is none of unix:/path, tcp://host:port, tls://host:port`, { address })
}

export function formatAddress(e: Endpoint): string {
  return e.kind === 'unix' ? `unix:${e.path}` : `${e.kind}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`
}

function pem(files: TlsFiles, what: keyof TlsFiles): Buffer | undefined {
  const f = files[what]
  if (!f) return undefined
  try {
    return readFileSync(f)
  } catch (e: any) {
    throw new SpillwayError('ERR_SPILLWAY_INVALID_CONFIG', `cannot read the TLS ${what} file ${f}: ${e.message}`, { field: `tls ${what}`, value: f }, { cause: e })
  }
}

function tlsServer(files: TlsFiles, onConnection: (s: Socket) => void): Server {
  const cert = pem(files, 'cert')
  const key = pem(files, 'key')
  if (!cert || !key) throw new SpillwayError('ERR_SPILLWAY_INVALID_CONFIG', 'a tls:// listener needs a certificate and its key (tlsCert, tlsKey)', { field: 'tlsCert' })
  const ca = pem(files, 'ca')
  // With a CA, peers must show a certificate it signed as well as the secret.
  return tls.createServer({ cert, key, ca, requestCert: !!ca, rejectUnauthorized: !!ca, minVersion: 'TLSv1.2' }, onConnection)
}

/** Listens at `address` (port 0 picks one); resolves with the address actually bound. */
export async function listen(address: string, onConnection: (s: Socket) => void, files: TlsFiles = {}): Promise<{ server: Server; address: string }> {
  const e = parseAddress(address)
  const server = e.kind === 'tls' ? tlsServer(files, onConnection) : createServer({ noDelay: true }, onConnection)
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
export function dial(address: string, timeoutMs = 10_000, files: TlsFiles = {}): Promise<Socket> {
  const e = parseAddress(address)
  return new Promise((resolve, reject) => {
    const s =
      e.kind === 'unix'
        ? connect(e.path)
        : e.kind === 'tls'
          ? tls.connect({ host: e.host, port: e.port, ca: pem(files, 'ca'), cert: pem(files, 'cert'), key: pem(files, 'key'), servername: /^[\d.:]+$/.test(e.host) ? undefined : e.host, minVersion: 'TLSv1.2' })
          : connect({ host: e.host, port: e.port, noDelay: true })
    const timer = setTimeout(() => {
      s.destroy()
      reject(new SpillwayError('ERR_SPILLWAY_TRANSFER', `no answer from ${address} within ${timeoutMs / 1000} s`, { address }))
    }, timeoutMs)
    s.once(e.kind === 'tls' ? 'secureConnect' : 'connect', () => {
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
