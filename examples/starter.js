// A first spillway program: a local cluster, a bag of items worked on where
// they live, a task of your own, and a clean close. Run: node starter.js
const { setupClient, bag } = require('spillway')

async function main() {
  // Two worker processes of 1 GiB each. spillway's own messages (the
  // configuration summary) go to stderr: stdout holds only what you print.
  const { client, cluster } = await setupClient({ workloadType: 'cpu', maxWorkers: 2, maxMemGb: 3, reserveMemGb: 1, dashboard: false })
  try {
    const words = bag.fromSequence(['spill', 'to', 'disk', 'when', 'memory', 'runs', 'short'], { npartitions: 2 })
    console.log('letters:', await client.compute(words.map((w) => w.length).sum()))
    console.log('long words:', await client.compute(words.filter((w) => w.length > 4)))
    const product = client.submit((a, b) => a * b, [6, 7])
    console.log('6 × 7 =', await product.result())
  } finally {
    await client.close()
    await cluster.close() // stops the workers and removes the spill directory
  }
}

main()
