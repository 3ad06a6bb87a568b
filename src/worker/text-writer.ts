// Writes a partition's items as lines of text, first under a temporary
// name in the target's directory and then renamed over it: a failed or
// repeated task never leaves half a file, and readers see the old file or
// the new one.

import { randomBytes } from 'node:crypto'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { compressFile } from '../native/file-codecs'
import { ownTaskError, SpillwayError } from '../base/errors'
import type { Compression } from '../wire/bag'

export async function writeLines(path: string, items: Iterable<unknown>, compression: Compression): Promise<string> {
  const lines: string[] = []
  for (const v of items) lines.push(typeof v === 'string' ? v : String(v))
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
    await rm(tmp, { force: true })
    throw ownTaskError('ERR_SPILLWAY_WRITE', `could not write ${path}: ${e?.message ?? e}`, { path, cause: e?.code })
  }
  return path
}
