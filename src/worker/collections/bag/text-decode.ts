// Checks a block's bytes decode in its encoding before they are made into
// lines: Node's decoder turns invalid UTF-8 into U+FFFD without a word, so
// by default (errors: 'strict', as Python's) a block with invalid bytes
// fails naming the file and the byte; errors: 'replace' keeps U+FFFD.

import { isUtf8 } from 'node:buffer'
import { ownTaskError } from '../../../base/errors'
import { codeUnit, isUtf8Encoding, type DecodeErrors } from '../../../wire/text-encoding'

/** Length of the UTF-8 sequence a lead byte starts and the allowed range of its second byte (RFC 3629: no overlongs, surrogates or code points past U+10FFFF). */
function sequence(lead: number): [number, number, number] | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf]
  if (lead === 0xe0) return [3, 0xa0, 0xbf]
  if (lead === 0xed) return [3, 0x80, 0x9f]
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf]
  if (lead === 0xf0) return [4, 0x90, 0xbf]
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf]
  if (lead === 0xf4) return [4, 0x80, 0x8f]
  return undefined
}

/** The offset of the first byte that does not start or continue a valid UTF-8 character, or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0
  while (i < b.length) {
    const lead = b[i]
    if (lead < 0x80) {
      i++
      continue
    }
    const seq = sequence(lead)
    if (!seq) return i
    const [n, lo, hi] = seq
    if (i + n > b.length) return i
    if (b[i + 1] < lo || b[i + 1] > hi) return i
    for (let k = 2; k < n; k++) if (b[i + k] < 0x80 || b[i + k] > 0xbf) return i
    i += n
  }
  return -1
}

/** Where a block's bytes came from, for the message. */
export interface BlockOrigin {
  path: string
  /** The file offset of the block's first byte (of its decompressed content for a compressed file). */
  offset: number
  compression?: string
}

function hexAround(b: Uint8Array, i: number): string {
  return [...b.subarray(i, i + 4)].map((x) => `0x${x.toString(16).padStart(2, '0')}`).join(' ')
}

/** Throws ERR_SPILLWAY_DECODE naming the file and the offset of the first invalid byte, unless errors is 'replace'. */
export function checkDecodes(bytes: Buffer, encoding: string, errors: DecodeErrors | undefined, at: BlockOrigin): void {
  if (errors === 'replace') return
  let bad = -1
  let what = ''
  if (isUtf8Encoding(encoding)) {
    // isUtf8 is the fast path; the scan only runs to name the byte.
    if (isUtf8(bytes)) return
    bad = firstInvalidUtf8(bytes)
    what = `is not valid UTF-8 at byte ${at.offset + bad} (${hexAround(bytes, bad)})`
  } else if (codeUnit(encoding) === 2 && bytes.length % 2 === 1) {
    bad = bytes.length - 1
    what = `ends in half a UTF-16 code unit at byte ${at.offset + bad}`
  }
  if (bad === -1) return
  const of = at.compression ? ` of its ${at.compression}-decompressed content` : ''
  throw ownTaskError(
    'ERR_SPILLWAY_DECODE',
    `file ${at.path} ${what}${of}: pass the file's own encoding (encoding: 'latin1', 'utf16le', ...), or errors: 'replace' to read U+FFFD in place of invalid bytes`,
    { path: at.path, offset: at.offset + bad, encoding },
  )
}
