// One move timed, for bench/transfer and bench/nodes: a `mb` MiB value made
// on worker `a`, then consumed by a task on `a` and by one on `b`; the move
// is the difference between the two.
'use strict'
const { join } = require('node:path')

const now = () => Number(process.hrtime.bigint()) / 1e9

async function timeMove(client, a, b, mb, seed) {
  const fn = (name) => ({ module: join(__dirname, 'producer.mjs'), name })
  const value = client.submit(fn('make'), [mb, seed], { workers: [a] })
  await value.settled()
  let t0 = now()
  await client.submit(fn('size'), [value], { workers: [a], pure: false }).result()
  const local = now() - t0
  t0 = now()
  await client.submit(fn('size'), [value], { workers: [b], pure: false }).result()
  const remote = now() - t0
  value.release()
  return Math.max(1e-6, remote - local)
}

module.exports = { timeMove }
