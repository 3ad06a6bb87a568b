// The scheduler file: where workers started elsewhere (another node, another
// rank of the job) find the scheduler. Written atomically (a temp file, then
// rename), 0600, with the cluster's secret in a 0600 file beside it; removed
// on close. Readers wait for it to appear and parse: shared filesystems are
// slow to show new files, and a half-written file must never be read.

import { randomBytes } from 'node:crypto'
import { chmodSync, openSync, readFileSync, renameSync, rmSync, writeSync, closeSync, fsyncSync } from 'node:fs'
import { SpillwayError } from '../base/errors'

export interface SchedulerInfo {
  /** tcp://host:port the scheduler listens on. */
  address: string
  /** spillway's version on the scheduler. */
  version: string
  /** The batch job it runs in (SLURM_JOB_ID, PBS_JOBID), if any. */
  jobId?: string
  pid: number
}

/** The secret's file for a scheduler file. */
export function secretFileOf(schedulerFile: string): string {
  return `${schedulerFile}.secret`
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  // 'wx': a fresh file, never one planted in our way; 0600 from birth.
  const fd = openSync(tmp, 'wx', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  chmodSync(tmp, 0o600)
  renameSync(tmp, path)
}

/** Writes the secret, then the scheduler file (a reader that sees the file finds the secret). */
export function writeSchedulerFile(path: string, info: SchedulerInfo, secret: Buffer): void {
  writeAtomic(secretFileOf(path), secret.toString('hex') + '\n')
  writeAtomic(path, JSON.stringify(info, null, 2) + '\n')
}

export function removeSchedulerFile(path: string): void {
  rmSync(path, { force: true })
  rmSync(secretFileOf(path), { force: true })
}

/** The scheduler file as it is now: its contents, or why there are none (absent, or there but not a scheduler file). */
export function schedulerFileState(path: string): { info: SchedulerInfo } | { missing: string } | { malformed: string } {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e: any) {
    return e?.code === 'ENOENT' ? { missing: 'no such file' } : { malformed: `it cannot be read: ${e?.message ?? e}` }
  }
  let info: any
  try {
    info = JSON.parse(text)
  } catch (e: any) {
    return { malformed: `it is not JSON (${e?.message ?? e})` }
  }
  if (typeof info?.address === 'string' && typeof info?.version === 'string') return { info: info as SchedulerInfo }
  return { malformed: 'it is JSON without the string fields address and version a scheduler writes' }
}

/** The scheduler file as it is now, if it is there and whole. */
export function parseSchedulerFile(path: string): SchedulerInfo | undefined {
  const state = schedulerFileState(path)
  return 'info' in state ? state.info : undefined
}

/** The secret in a file (hex, 64 digits = 256 bits). */
export function readSecretFile(path: string): Buffer {
  let text: string
  try {
    text = readFileSync(path, 'utf8').trim()
  } catch (e: any) {
    throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `cannot read the secret file ${path}: ${e.message}`, { secretFile: path }, { cause: e })
  }
  if (!/^[0-9a-f]{64}$/i.test(text)) {
    throw new SpillwayError('ERR_SPILLWAY_INVALID_ARGUMENT', `the secret file ${path} does not hold 64 hex digits (a 256-bit secret)`, { secretFile: path })
  }
  return Buffer.from(text, 'hex')
}

/** Waits up to `timeoutMs` for the scheduler file to appear and parse. */
export async function readSchedulerFile(path: string, timeoutMs: number): Promise<SchedulerInfo> {
  const deadline = Date.now() + timeoutMs
  let delay = 50
  for (;;) {
    const state = schedulerFileState(path)
    if ('info' in state) return state.info
    if (Date.now() >= deadline) {
      // Written atomically, a scheduler file is whole or absent: one that
      // stays unreadable is not one, and "missing" would send the user looking in the wrong place.
      if ('malformed' in state) {
        throw new SpillwayError('ERR_SPILLWAY_NO_SCHEDULER', `the scheduler file ${path} is malformed: ${state.malformed}; it should be the file setupClient({ schedulerFile }) writes`, { schedulerFile: path, reason: 'malformed' })
      }
      throw new SpillwayError('ERR_SPILLWAY_NO_SCHEDULER', `no scheduler file at ${path} after ${Math.round(timeoutMs / 1000)} s: start the scheduler (rank 0, or setupClient({ schedulerFile })) first, and check that this node sees the same filesystem`, { schedulerFile: path })
    }
    await new Promise((r) => setTimeout(r, delay))
    delay = Math.min(1000, delay * 2)
  }
}
