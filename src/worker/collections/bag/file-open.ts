// Opens a file a bag planned, as the worker reads it: without blocking (a
// FIFO put where the file was would hold the open, and a thread of the
// pool, until a writer came), and only if it is still the regular file
// that was planned.

import { constants, type Stats } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { constants as osConstants } from 'node:os'
import { ownTaskError, SpillwayError } from '../../../base/errors'
import type { PlannedFile } from '../../../wire/bag'

export function readFailed(path: string, e: any, what = 'could not be read'): SpillwayError {
  return ownTaskError('ERR_SPILLWAY_READ', `file ${path} ${what}: ${e?.message ?? e}`, { path, cause: e?.code }, { cause: e })
}

function kindOfStat(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO'
  if (st.isDirectory()) return 'a directory'
  if (st.isSocket()) return 'a socket'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/** What fstat found, as Stats or as the core's batched read reports it. */
export interface FoundStat {
  size: number
  mtimeMs: number
  ctimeMs: number
  ino: number
}

/** How the file differs from the planned one, or undefined if it does not. */
function changes(f: PlannedFile, st: FoundStat): string | undefined {
  const seen: string[] = []
  if (st.size !== f.size) seen.push(`size ${f.size} → ${st.size}`)
  if (Math.floor(st.mtimeMs) !== Math.floor(f.mtimeMs)) seen.push(`mtime ${new Date(f.mtimeMs).toISOString()} → ${new Date(st.mtimeMs).toISOString()}`)
  if (f.ino !== undefined && st.ino !== f.ino) seen.push(`inode ${f.ino} → ${st.ino}: another file`)
  // ctime cannot be set back: it tells a rewrite whose size and mtime were restored.
  else if (f.ctimeMs !== undefined && Math.floor(st.ctimeMs) !== Math.floor(f.ctimeMs)) seen.push('ctime changed: rewritten')
  return seen.length ? seen.join(', ') : undefined
}

function notRegular(f: PlannedFile, kind: string): SpillwayError {
  return ownTaskError('ERR_SPILLWAY_READ', `file ${f.path} is ${kind} now, not the regular file planned: build the bag again`, { path: f.path })
}

function changedSincePlanned(f: PlannedFile, changed: string): SpillwayError {
  return ownTaskError('ERR_SPILLWAY_READ', `file ${f.path} changed after the bag was planned (${changed}): build the bag again`, { path: f.path })
}

/** Why the core's batched read (worker/text-batch.ts) refused a planned file, worded as openPlanned words it. */
export function batchFault(f: PlannedFile, fault: { kind: string; errno?: number; message?: string; what?: string } & Partial<FoundStat>): SpillwayError {
  if (fault.kind === 'type') return notRegular(f, fault.what ?? 'not a regular file')
  if (fault.kind === 'changed') return changedSincePlanned(f, changes(f, fault as FoundStat) ?? 'fstat differs')
  const code = fault.errno == null ? undefined : ERRNO_NAMES.get(fault.errno)
  const message = `${code ? `${code}: ` : ''}${(fault.message ?? 'failed').replace(/ \(os error \d+\)$/, '')}, ${fault.kind} '${f.path}'`
  return readFailed(f.path, { message, code })
}

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n as number, name]))

/** The planned file opened for reading; a coded ERR_SPILLWAY_READ naming it if it is not there, not a regular file, or not the one planned. */
export async function openPlanned(f: PlannedFile): Promise<FileHandle> {
  let fd: FileHandle
  try {
    fd = await open(f.path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (e) {
    throw readFailed(f.path, e)
  }
  try {
    const st = await fd.stat()
    if (!st.isFile()) throw notRegular(f, kindOfStat(st))
    const changed = changes(f, st)
    if (changed) throw changedSincePlanned(f, changed)
    return fd
  } catch (e) {
    await fd.close().catch(() => undefined)
    throw e instanceof SpillwayError ? e : readFailed(f.path, e)
  }
}

/** Bytes [start, end) of an open file (fewer if it ends first). */
export async function readRange(fd: FileHandle, start: number, end: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(Math.max(0, end - start))
  let got = 0
  while (got < out.length) {
    const { bytesRead } = await fd.read(out, got, out.length - got, start + got)
    if (bytesRead === 0) break
    got += bytesRead
  }
  return out.subarray(0, got)
}
