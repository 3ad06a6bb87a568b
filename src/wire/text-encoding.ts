// The text encodings the bag readers take, as the client checks them and
// the workers cut and decode blocks by them.

/** Node's names for the encodings a line of text can be in (hex and base64 are not: '\n' has no bytes in them). */
export const TEXT_ENCODINGS = ['utf8', 'utf-8', 'utf16le', 'utf-16le', 'ucs2', 'ucs-2', 'latin1', 'binary', 'ascii'] as const

export function isTextEncoding(e: unknown): e is BufferEncoding {
  return typeof e === 'string' && (TEXT_ENCODINGS as readonly string[]).includes(e.toLowerCase())
}

/** Bytes per code unit: a block boundary, and a delimiter found in the bytes, must fall on a multiple of it. */
export function codeUnit(encoding: string): 1 | 2 {
  return /^(utf-?16le|ucs-?2)$/i.test(encoding) ? 2 : 1
}

export function isUtf8Encoding(encoding: string): boolean {
  return /^utf-?8$/i.test(encoding)
}

/** What to do with bytes that are not valid in the encoding: fail naming the first (Python's and Dask's 'strict'), or decode them as U+FFFD. */
export type DecodeErrors = 'strict' | 'replace'
