// Mutual challenge-response on a fresh connection, before any message from
// the peer is decoded: each side proves it holds the cluster's secret by an
// HMAC over both nonces, compared in constant time. Fixed-size reads only, so
// a stranger can make us parse nothing. The version byte refuses a peer of
// another wire format with a clear error. A proof that fails is answered
// with a fixed refusal in place of our proof before the close: it tells the
// peer only what the close would, but lets a worker tell a wrong secret from
// a connection dropped under load (which it should try again).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Socket } from 'node:net'
import { SpillwayError } from '../base/errors'

const MAGIC = Buffer.from('SPWY')
export const WIRE_VERSION = 1
const NONCE = 32
const MAC = 32
/** Sent in place of the server's proof when the peer's failed; an HMAC equal to it is a 2^-256 chance. */
const REFUSED = Buffer.concat([Buffer.from('SPWY proof refused'), Buffer.alloc(MAC - 18)])

function mac(secret: Buffer, role: string, a: Buffer, b: Buffer): Buffer {
  return createHmac('sha256', secret).update(role).update(a).update(b).digest()
}

/** Reads exactly n bytes; what came after them is returned too. */
function readExact(socket: Socket, n: number, timeoutMs: number): Promise<{ bytes: Buffer; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const pieces: Buffer[] = []
    let have = 0
    // `lost`: the peer went away or stalled, which proves nothing about its secret (a dialer takes it for a lost peer).
    const timer = setTimeout(() => finish(new SpillwayError('ERR_SPILLWAY_AUTH', `peer sent no handshake within ${timeoutMs} ms`, { lost: 'timeout' })), timeoutMs)
    const onData = (c: Buffer) => {
      pieces.push(c)
      have += c.length
      if (have >= n) finish()
    }
    const onEnd = () => finish(new SpillwayError('ERR_SPILLWAY_AUTH', 'peer closed the connection during the handshake', { lost: 'closed' }))
    const finish = (err?: Error) => {
      clearTimeout(timer)
      socket.off('data', onData)
      socket.off('close', onEnd)
      socket.off('error', onEnd)
      if (err) return reject(err)
      socket.pause()
      const all = Buffer.concat(pieces, have)
      resolve({ bytes: all.subarray(0, n), rest: all.subarray(n) })
    }
    socket.on('data', onData)
    socket.once('close', onEnd)
    socket.once('error', onEnd)
    socket.resume()
  })
}

function hello(nonce: Buffer): Buffer {
  return Buffer.concat([MAGIC, Buffer.from([WIRE_VERSION]), nonce])
}

function checkHello(b: Buffer): Buffer {
  if (!b.subarray(0, 4).equals(MAGIC)) throw new SpillwayError('ERR_SPILLWAY_AUTH', 'peer is not a spillway endpoint')
  if (b[4] !== WIRE_VERSION) {
    throw new SpillwayError('ERR_SPILLWAY_VERSION', `peer speaks spillway wire version ${b[4]}, this process ${WIRE_VERSION}: run the same spillway version everywhere`, { peer: b[4], ours: WIRE_VERSION })
  }
  return b.subarray(5)
}

/** The accepting side. Resolves with bytes that followed the handshake. */
export async function acceptHandshake(socket: Socket, secret: Buffer, timeoutMs = 10_000): Promise<Buffer> {
  const ours = randomBytes(NONCE)
  socket.write(hello(ours))
  const { bytes, rest } = await readExact(socket, 5 + NONCE + MAC, timeoutMs)
  const theirs = checkHello(bytes.subarray(0, 5 + NONCE))
  const proof = bytes.subarray(5 + NONCE)
  if (!timingSafeEqual(proof, mac(secret, 'client', ours, theirs))) {
    socket.write(REFUSED)
    throw new SpillwayError('ERR_SPILLWAY_AUTH', 'peer does not hold the cluster secret')
  }
  socket.write(mac(secret, 'server', theirs, ours))
  return rest
}

/** The connecting side. Resolves with bytes that followed the handshake. */
export async function offerHandshake(socket: Socket, secret: Buffer, timeoutMs = 10_000): Promise<Buffer> {
  const ours = randomBytes(NONCE)
  const first = await readExact(socket, 5 + NONCE, timeoutMs)
  const theirs = checkHello(first.bytes)
  socket.write(Buffer.concat([hello(ours), mac(secret, 'client', theirs, ours)]))
  const { bytes, rest } = await readExact(socket, MAC, timeoutMs)
  // Bytes the server sent early would have come in `first.rest`: it sends nothing unasked.
  if (first.rest.length) throw new SpillwayError('ERR_SPILLWAY_AUTH', 'peer sent data before the handshake ended')
  if (bytes.equals(REFUSED)) {
    throw new SpillwayError('ERR_SPILLWAY_AUTH', "peer refused this process's proof: the secret it was given is not the peer's", { refused: true })
  }
  if (!timingSafeEqual(bytes, mac(secret, 'server', ours, theirs))) {
    throw new SpillwayError('ERR_SPILLWAY_AUTH', 'peer does not hold the cluster secret')
  }
  return rest
}
