// One script for every rank of a batch allocation (srun, mpiexec, pbsdsh):
// rank 0 gets the client; every other rank becomes workers and never gets
// past setupClient. Run as docs/hpc.md ("Many nodes") shows.
import { setupClient, random } from 'spillway'

const { client, cluster } = await setupClient({ cluster: 'allocation', dashboard: false })
const ranks = Number(process.env.SLURM_NTASKS ?? process.env.OMPI_COMM_WORLD_SIZE ?? process.env.PMI_SIZE ?? 2)
await client.waitForWorkers(ranks - 1, { timeout: 120_000 })

const x = await client.persist(random.random([20000, 20000], { chunks: [1000, 1000], seed: 42 }))
await x.wait()
console.log(JSON.stringify({ mean: await client.compute(x.mean()), workers: client.scheduler.workers.size, hosts: [...new Set([...client.scheduler.workers.values()].map((w) => w.host))] }))
await client.close()
await cluster.close()
