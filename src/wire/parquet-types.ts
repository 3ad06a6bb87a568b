// Parquet columns whose values hyparquet would round, as the client checks
// them when a bag is planned and the worker converts them: a DECIMAL (a
// float cannot hold decimal(38,10)) becomes a string of its exact digits, a
// TIMESTAMP in micro- or nanoseconds an ISO 8601 string with all its
// digits (a Date holds milliseconds).

import type { SchemaElement } from 'hyparquet'

/** The codecs the workers read: hyparquet's own (snappy) and native/parquet-codecs.ts's. LZO, which no writer of today uses, is not among them. */
export const READABLE_PARQUET_CODECS: readonly string[] = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4', 'LZ4_RAW']

export type ExactKind = { kind: 'decimal'; scale: number } | { kind: 'timestamp'; unit: 'MICROS' | 'NANOS'; utc: boolean }

/** How a column's values are kept exact, or undefined when hyparquet's own values are. */
export function exactKind(e: SchemaElement): ExactKind | undefined {
  const lt = e.logical_type
  if (e.converted_type === 'DECIMAL' || lt?.type === 'DECIMAL') return { kind: 'decimal', scale: e.scale ?? (lt?.type === 'DECIMAL' ? lt.scale : 0) ?? 0 }
  if (e.converted_type === 'TIMESTAMP_MICROS') return { kind: 'timestamp', unit: 'MICROS', utc: true }
  if (lt?.type === 'TIMESTAMP' && (lt.unit === 'MICROS' || lt.unit === 'NANOS')) return { kind: 'timestamp', unit: lt.unit, utc: lt.isAdjustedToUTC }
  return undefined
}

/** Each leaf column of a schema, with its path and whether it is a top-level column (a row's own field). */
export function leafColumns(schema: SchemaElement[]): { element: SchemaElement; path: string[]; topLevel: boolean }[] {
  const out: { element: SchemaElement; path: string[]; topLevel: boolean }[] = []
  let i = 1
  const walk = (path: string[]): void => {
    const e = schema[i++]
    const p = [...path, e.name]
    if (!e.num_children) out.push({ element: e, path: p, topLevel: p.length === 1 })
    else for (let c = 0; c < e.num_children; c++) walk(p)
  }
  for (let c = 0; c < (schema[0]?.num_children ?? 0); c++) walk([])
  return out
}

/** The exact digits of unscaled × 10^-scale: '-0.0000000001', '12.50', '7'. */
export function decimalString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n
  const digits = (neg ? -unscaled : unscaled).toString()
  if (scale <= 0) return (neg ? '-' : '') + digits + '0'.repeat(-scale)
  const padded = digits.padStart(scale + 1, '0')
  return `${neg ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`
}

/** A DECIMAL's unscaled value as hyparquet gives it untyped: an INT32 number, an INT64 bigint, or big-endian two's complement bytes. */
export function unscaledOf(v: unknown): bigint {
  if (typeof v === 'bigint') return v
  if (typeof v === 'number') return BigInt(v)
  const bytes = v as Uint8Array
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  if (bytes.length && bytes[0] & 0x80) n -= 1n << BigInt(bytes.length * 8)
  return n
}

/** '2024-01-02T03:04:05.123456Z' (6 digits for MICROS, 9 for NANOS; no 'Z' when not adjusted to UTC). */
export function isoTimestamp(v: bigint, unit: 'MICROS' | 'NANOS', utc: boolean): string {
  const per = unit === 'MICROS' ? 1_000_000n : 1_000_000_000n
  let secs = v / per
  let frac = v % per
  if (frac < 0n) (frac += per), (secs -= 1n)
  const iso = new Date(Number(secs) * 1000).toISOString()
  return `${iso.slice(0, -5)}.${frac.toString().padStart(unit === 'MICROS' ? 6 : 9, '0')}${utc ? 'Z' : ''}`
}
