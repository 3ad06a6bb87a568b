// Sizes as users write them, read by one parser for every option and flag:
// a bare number is bytes; a unit is taken as written, SI or IEC, as Dask's
// parse_bytes does: '10GB' is 10·10⁹ bytes, '10 GiB' 10·2³⁰. Units ignore
// case, so 'k' and 'K' (and 'kB', 'KB') are all 1000; only the 'i' forms
// ('KiB', 'Ki') are powers of 1024. Fractions are fine ('1.5 GiB').

const SI = { k: 1e3, m: 1e6, g: 1e9, t: 1e12, p: 1e15 } as const
const IEC = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 } as const

/** Every unit spelling, lower-cased, to its bytes: '', b; k, kb; ki, kib; … up to p. */
export const SIZE_UNITS: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries([
    ['', 1],
    ['b', 1],
    ...Object.entries(SI).flatMap(([p, n]) => [[p, n], [`${p}b`, n]]),
    ...Object.entries(IEC).flatMap(([p, n]) => [[`${p}i`, n], [`${p}ib`, n]]),
  ]),
)

/** What a size may be, for error messages. */
export const SIZE_ALLOWED = "a number of bytes, or a string such as '512 MiB', '1.5 GiB' or '10GB' (GB = 10⁹ bytes, GiB = 2³⁰)"

const SIZE = /^\s*(\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?\s*([a-zA-Z]*)\s*$/

/** Bytes in `v` (rounded down to a whole byte), or undefined when it is not a size (the caller names the field). */
export function parseBytes(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined
  if (typeof v !== 'string') return undefined
  const m = SIZE.exec(v)
  if (!m) return undefined
  const unit = m[3].toLowerCase()
  if (!Object.hasOwn(SIZE_UNITS, unit)) return undefined
  const n = Number(m[1]) * 10 ** Number(m[2] ?? 0) * SIZE_UNITS[unit]
  return Number.isFinite(n) ? Math.floor(n) : undefined
}

/**
 * Why `v` is refused as a memory size (a job's or a worker's), or undefined.
 * A bare number under 1 MiB is no memory limit anyone means: it is the old
 * reading of a bare number as GiB (jobqueue's `memory: 16`), so the message
 * says how to write that.
 */
export function memorySizeProblem(v: unknown): string | undefined {
  const n = parseBytes(v)
  if (n === undefined || n === 0) return SIZE_ALLOWED
  if (typeof v === 'number' && v < 2 ** 20) return `${SIZE_ALLOWED}; a bare number is bytes, so ${v} is ${v} bytes: for ${v} GiB write '${v} GiB'`
  return undefined
}

/** A size as people read it: '512 B', '3.2 MiB', '1.50 GiB'. */
export function formatBytes(n: number): string {
  if (n < 2 ** 10) return `${n} B`
  if (n < 2 ** 20) return `${(n / 2 ** 10).toFixed(1)} KiB`
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MiB`
  return `${(n / 2 ** 30).toFixed(2)} GiB`
}
