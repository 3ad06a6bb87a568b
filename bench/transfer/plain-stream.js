// The anchor of bench/transfer: one Node process streams `mb` MiB over a
// Unix socket to this one, which copies it into one buffer (as spillway's
// receiver does). Prints the seconds it took.
'use strict'
const net = require('node:net')
const { fork } = require('node:child_process')
const { randomFillSync } = require('node:crypto')

if (process.argv[2] === 'send') {
  const [path, mb] = [process.argv[3], Number(process.argv[4])]
  const b = Buffer.allocUnsafe(mb * 2 ** 20)
  randomFillSync(b)
  const s = net.connect(path, () => process.send('ready'))
  process.on('message', () => s.end(b))
  s.on('close', () => process.exit(0))
} else {
  const path = process.argv[2]
  const mb = Number(process.argv[3])
  const n = mb * 2 ** 20
  const server = net.createServer((sock) => {
    const out = Buffer.allocUnsafe(n)
    let got = 0
    let t0
    child.once('message', () => {
      t0 = process.hrtime.bigint()
      child.send('go')
    })
    sock.on('data', (c) => {
      c.copy(out, got)
      got += c.length
    })
    sock.on('end', () => {
      const s = Number(process.hrtime.bigint() - t0) / 1e9
      console.log(JSON.stringify({ seconds: s, bytes: got }))
      server.close()
    })
  })
  let child
  server.listen(path, () => {
    child = fork(__filename, ['send', path, String(mb)])
  })
}
