// Sizes as users write them: a number of bytes, or '128 MiB', '1.5GB', '64k'.

const UNITS: Record<string, number> = {
  b: 1,
  k: 1e3, kb: 1e3, kib: 2 ** 10,
  m: 1e6, mb: 1e6, mib: 2 ** 20,
  g: 1e9, gb: 1e9, gib: 2 ** 30,
  t: 1e12, tb: 1e12, tib: 2 ** 40,
}

/** Bytes in `v`, or undefined when it is not a size (the caller names the field). */
export function parseBytes(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined
  if (typeof v !== 'string') return undefined
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v)
  if (!m) return undefined
  const unit = UNITS[(m[2] || 'b').toLowerCase()]
  return unit === undefined ? undefined : Math.floor(Number(m[1]) * unit)
}

/** A size as people read it: '512 B', '3.2 MiB', '1.50 GiB'. */
export function formatBytes(n: number): string {
  if (n < 2 ** 10) return `${n} B`
  if (n < 2 ** 20) return `${(n / 2 ** 10).toFixed(1)} KiB`
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MiB`
  return `${(n / 2 ** 30).toFixed(2)} GiB`
}
