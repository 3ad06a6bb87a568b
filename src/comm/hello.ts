// The first messages on a worker's connection to a scheduler, after the
// handshake: the worker says who it is and what it runs; the scheduler
// welcomes it or says why not (another spillway version, a closed cluster).

import { SpillwayError } from '../base/errors'

export interface Hello {
  kind: 'hello'
  /** spillway's version on the worker: it must be the scheduler's. */
  version: string
  /** Node name (os.hostname()), for reports and dashboards. */
  host: string
  pid: number
  /** The nanny's slot on its node and the worker's incarnation. */
  name: string
  nthreads: number
  memoryLimit: number
  /** The node-local directory it spills under. */
  spillDir: string
  /** Where its data server should listen (tcp://host:0 picks a port). */
  dataAddress: string
  /** The batch job it runs in (SLURM_JOB_ID, PBS_JOBID), if any. */
  jobId?: string
}

/**
 * The scheduler's answer. A welcomed worker hears from the scheduler at
 * least every `pingMs`; silence past `ttlMs` means it is cut off, and it
 * exits (its nanny then looks for the scheduler until its death timeout).
 */
export type Welcome = { kind: 'welcome'; address: string; pingMs: number; ttlMs: number } | { kind: 'refused'; code: string; reason: string }

const FIELDS: Record<keyof Omit<Hello, 'kind' | 'jobId'>, 'string' | 'number'> = {
  version: 'string',
  host: 'string',
  pid: 'number',
  name: 'string',
  nthreads: 'number',
  memoryLimit: 'number',
  spillDir: 'string',
  dataAddress: 'string',
}

/** A hello with every field of its type, or the error that names the first one that is not. */
export function checkHello(m: unknown): Hello {
  const h = m as Record<string, unknown>
  if (!h || h.kind !== 'hello') throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', 'a joining worker sent something other than its hello first')
  for (const [f, type] of Object.entries(FIELDS)) {
    if (typeof h[f] !== type || (type === 'number' && !(Number(h[f]) > 0))) {
      throw new SpillwayError('ERR_SPILLWAY_PROTOCOL', `a joining worker's hello has ${f} = ${JSON.stringify(h[f])}; expected a ${type === 'number' ? 'positive number' : 'string'}`, { field: f })
    }
  }
  return h as unknown as Hello
}
