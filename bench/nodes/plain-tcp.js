// The anchor of bench/nodes' transfer figure: a Node process streams `mb`
// MiB over TCP to another (in another network namespace), which copies it
// into one buffer as spillway's receiver does; the receiver prints the
// seconds from the connection to the last byte.
//   node plain-tcp.js recv HOST PORT MB     (prints {"seconds": …} when done)
//   node plain-tcp.js send HOST PORT MB
'use strict'
const net = require('node:net')
const { randomFillSync } = require('node:crypto')

const [mode, host, port, mb] = process.argv.slice(2)
const n = Number(mb) * 2 ** 20
if (mode === 'send') {
  const b = Buffer.allocUnsafe(n)
  randomFillSync(b)
  const s = net.connect({ host, port: Number(port) }, () => s.end(b))
} else {
  const server = net.createServer((sock) => {
    const t0 = process.hrtime.bigint()
    const out = Buffer.allocUnsafe(n)
    let got = 0
    sock.on('data', (c) => {
      c.copy(out, got)
      got += c.length
    })
    sock.on('end', () => {
      console.log(JSON.stringify({ seconds: Number(process.hrtime.bigint() - t0) / 1e9, bytes: got }))
      server.close()
    })
  })
  server.listen(Number(port), host, () => console.log('ready'))
}
