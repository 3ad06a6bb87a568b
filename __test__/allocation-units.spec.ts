import test from 'ava'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { allocationSchedulerFile, detectRank } from '../src/deploy/remote/allocation'

test('rank detection: srun, mpiexec (Open MPI, MPICH/Intel MPI via PMI, PMIx) and pbsdsh', (t) => {
  t.is(detectRank({}), undefined, 'no launcher')
  t.deepEqual(detectRank({ SLURM_PROCID: '2', SLURM_NTASKS: '3', SLURM_JOB_ID: '1234', SLURM_NODEID: '0', SLURM_TASKS_PER_NODE: '3' }), { rank: 2, size: 3, localSize: 3, launcher: 'slurm', jobId: '1234' })
  // "2(x3),1": nodes 0–2 run two tasks each, node 3 one.
  t.like(detectRank({ SLURM_PROCID: '6', SLURM_NTASKS: '7', SLURM_NODEID: '3', SLURM_TASKS_PER_NODE: '2(x3),1' }), { rank: 6, localSize: 1 })
  t.like(detectRank({ SLURM_PROCID: '3', SLURM_NODEID: '1', SLURM_TASKS_PER_NODE: '2(x3),1' }), { localSize: 2 })
  t.like(detectRank({ SLURM_PROCID: '0', SLURM_NTASKS_PER_NODE: '4' }), { localSize: 4 })
  // mpiexec inside a SLURM job: the MPI rank, not the job step's SLURM_PROCID.
  t.deepEqual(detectRank({ OMPI_COMM_WORLD_RANK: '5', OMPI_COMM_WORLD_SIZE: '8', OMPI_COMM_WORLD_LOCAL_SIZE: '4', SLURM_PROCID: '0', SLURM_JOB_ID: '9' }), { rank: 5, size: 8, localSize: 4, launcher: 'openmpi', jobId: '9' })
  t.deepEqual(detectRank({ PMI_RANK: '1', PMI_SIZE: '2', MPI_LOCALNRANKS: '1', PBS_JOBID: '77.gadi-pbs' }), { rank: 1, size: 2, localSize: 1, launcher: 'pmi', jobId: '77.gadi-pbs' })
  t.like(detectRank({ PMIX_RANK: '3', PMIX_SIZE: '4', PMIX_LOCAL_SIZE: '2' }), { rank: 3, size: 4, localSize: 2, launcher: 'pmix' })
  t.is(detectRank({ SLURM_PROCID: 'x' }), undefined, 'not a number: not a rank')
})

test('rank detection under pbsdsh: PBS_VNODENUM from 0 (else PBS_TASKNUM from 1), slots from PBS_NODEFILE', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-pbs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const nodefile = join(dir, 'nodes')
  writeFileSync(nodefile, 'gadi-cpu-1.gadi.nci.org.au\ngadi-cpu-1.gadi.nci.org.au\ngadi-cpu-2.gadi.nci.org.au\n')
  const env = { PBS_JOBID: '123.gadi-pbs', PBS_NODEFILE: nodefile }
  t.deepEqual(detectRank({ ...env, PBS_VNODENUM: '0', PBS_TASKNUM: '1' }, 'gadi-cpu-1'), { rank: 0, size: 3, localSize: 2, launcher: 'pbs', jobId: '123.gadi-pbs' })
  t.like(detectRank({ ...env, PBS_TASKNUM: '3' }, 'gadi-cpu-2.gadi.nci.org.au'), { rank: 2, localSize: 1 })
  t.like(detectRank({ PBS_VNODENUM: '1', PBS_NODEFILE: join(dir, 'missing') }, 'h'), { rank: 1, size: undefined, localSize: undefined })
})

test('the allocation’s scheduler file sits in the working directory, keyed by the job, with no path in the key', (t) => {
  t.is(allocationSchedulerFile({ rank: 0, launcher: 'slurm', jobId: '1234' }, '/scratch/me'), '/scratch/me/spillway-scheduler-1234.json')
  t.is(allocationSchedulerFile({ rank: 0, launcher: 'pbs', jobId: '77.gadi-pbs' }, '/g/data'), '/g/data/spillway-scheduler-77.gadi-pbs.json')
  t.is(allocationSchedulerFile({ rank: 0, launcher: 'pbs', jobId: '../../etc/x' }, '/w'), '/w/spillway-scheduler-.._.._etc_x.json')
  t.is(allocationSchedulerFile({ rank: 0, launcher: 'openmpi' }, '/w'), '/w/spillway-scheduler-interactive.json')
})
