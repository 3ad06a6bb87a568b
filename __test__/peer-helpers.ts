// A fake worker for the protocol tests: it holds the cluster's secret (read
// from FILE.secret, as a `spillway worker` does), passes the handshake and
// says hello, then sends whatever the test wants, right or wrong.

import type { Socket } from 'node:net'
import { dial } from '../src/comm/address'
import { offerHandshake } from '../src/comm/handshake'
import { joinScheduler } from '../src/comm/join'
import { readSchedulerFile, readSecretFile, secretFileOf } from '../src/comm/scheduler-file'
import { SocketTransport } from '../src/comm/socket-transport'

export interface Peer {
  link: SocketTransport<any, any>
  /** The requests the scheduler sent, in order. */
  requests: any[]
  /** Resolves with the next request of this op (or one already seen and not yet taken). */
  nextRequest(op: string): Promise<any>
  closed: Promise<void>
}

export async function schedulerOf(file: string): Promise<{ address: string; secret: Buffer }> {
  const { address } = await readSchedulerFile(file, 5000)
  return { address, secret: readSecretFile(secretFileOf(file)) }
}

/** A connection past the handshake, before any hello. */
export async function authenticated(file: string): Promise<{ socket: Socket; link: SocketTransport<any, any> }> {
  const { address, secret } = await schedulerOf(file)
  const socket = await dial(address)
  const rest = await offerHandshake(socket, secret)
  return { socket, link: new SocketTransport<any, any>(socket, rest) }
}

function watch(link: SocketTransport<any, any>): Peer {
  const requests: any[] = []
  const waiting: Array<{ op: string; resolve(r: any): void }> = []
  const taken = new Set<any>()
  link.onMessage((m: any) => {
    if (m?.kind !== 'request') return
    requests.push(m)
    const i = waiting.findIndex((w) => w.op === m.request.op)
    if (i >= 0) {
      taken.add(m)
      waiting.splice(i, 1)[0].resolve(m)
    }
  })
  const closed = new Promise<void>((resolve) => link.onClose(resolve))
  return {
    link,
    requests,
    closed,
    nextRequest(op) {
      const seen = requests.find((r) => r.request.op === op && !taken.has(r))
      if (seen) {
        taken.add(seen)
        return Promise.resolve(seen)
      }
      return new Promise((resolve) => waiting.push({ op, resolve }))
    },
  }
}

/**
 * A peer that joined: hello sent, welcome heard. With `start` (the default)
 * it answers the start request as a worker would, so the scheduler takes it
 * as one of its workers.
 */
export async function fakeWorker(file: string, name: string, opts: { start?: boolean; nthreads?: number; host?: string; dataAddress?: string } = {}): Promise<Peer> {
  const { address, secret } = await schedulerOf(file)
  const { transport } = await joinScheduler(address, secret, {
    host: opts.host ?? 'fake-host',
    pid: 4242,
    name,
    nthreads: opts.nthreads ?? 8,
    memoryLimit: 2 ** 30,
    spillDir: '/nonexistent',
    dataAddress: 'tcp://127.0.0.1:0',
  })
  const peer = watch(transport as unknown as SocketTransport<any, any>)
  if (opts.start !== false) {
    const start = await peer.nextRequest('start')
    peer.link.send({ kind: 'reply', id: start.id, ok: true, result: { pid: 4242, dataAddress: opts.dataAddress ?? 'tcp://127.0.0.1:9' } })
  }
  return peer
}

/** Metrics as a real worker sends them, for tests to break one field at a time. */
export function goodMetrics(): Record<string, any> {
  return {
    managedBytes: 0, memoryBytes: 0, spilledBytes: { memory: 0, disk: 0 }, memoryCount: 0, diskCount: 0, spillCount: 0, unspillCount: 0,
    spillBytesWritten: 0, spillSeconds: 0, unspillBytesRead: 0, unspillSeconds: 0, writeFailures: 0, lastWriteNoSpace: false,
    consecutiveWriteFailures: 0, spillBackoffSeconds: 0, targetBytes: 1e8, spillCapRefusals: 0, spillCapReached: false, rss: 5e7, status: 'running', memoryLimit: 2 ** 30,
    thresholds: { target: 0.75, spill: 0.85, pause: 0.92, terminate: 0.98 }, taskCounts: { executing: 0, done: 0, failed: 0 },
    timings: { taskSeconds: 0, pausedSeconds: 0 }, transfer: { incomingBytes: 0, incomingCount: 0, outgoingBytes: 0, outgoingCount: 0 }, time: Date.now(),
  }
}
