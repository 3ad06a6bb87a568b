// Writes a partition's items as lines of text, first under a temporary
// name in the target's directory and then renamed over it: a failed or
// repeated task never leaves half a file, and readers see the old file or
// the new one.

import { randomBytes } from 'node:crypto'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { compressFile } from '../../../native/file-codecs'
import { ownTaskError, SpillwayError } from '../../../base/errors'
import type { Compression } from '../../../wire/bag'

/** What a value is, for a message: 'a number', 'null', 'an array', 'a Map'. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object') {
    const name = Object.getPrototypeOf(v)?.constructor?.name
    return name && name !== 'Object' ? `a ${name}` : 'an object'
  }
  return typeof v === 'undefined' ? 'undefined' : /^[aeiou]/.test(typeof v) ? `an ${typeof v}` : `a ${typeof v}`
}

export async function writeLines(path: string, items: Iterable<unknown>, compression: Compression): Promise<string> {
  const lines: string[] = []
  // As Dask's to_textfiles, lines are strings: String() of an object would write '[object Object]'.
  for (const v of items) {
    if (typeof v !== 'string') {
      throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: item ${lines.length} of its partition is ${kindOf(v)}, not a string; map the items to lines first (e.g. .map(JSON.stringify) or .map(String))`, { path, item: lines.length, type: kindOf(v) })
    }
    lines.push(v)
  }
  let data: Buffer = Buffer.from(lines.length ? lines.join('\n') + '\n' : '', 'utf8')
  if (compression) data = await compressFile(data, compression)
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    await mkdir(dirname(path), { recursive: true })
    // An earlier run of this task killed mid-write left its temporary file: this run replaces it.
    const stale = `.${basename(path)}.`
    for (const f of await readdir(dirname(path))) if (f.startsWith(stale) && f.endsWith('.tmp')) await rm(join(dirname(path), f), { force: true })
    await writeFile(tmp, data)
    await rename(tmp, path)
  } catch (e: any) {
    // The cause may be that the directory cannot exist (a component is a file): cleaning up then fails too.
    await rm(tmp, { force: true }).catch(() => undefined)
    throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: ${e?.message ?? e}`, { path, cause: e?.code }, { cause: e })
  }
  return path
}
