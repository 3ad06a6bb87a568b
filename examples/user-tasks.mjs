// The user's own task module for examples/user-pipeline.ts. Workers import it
// once each; every export is a plain function of its arguments.

/**
 * Reads slice `slice` of a dataset of fixed-width binary records (16 bytes:
 * float64 reading, uint32 sensor id, uint32 flags) and parses the readings
 * and sensor ids into columns. The records are generated here, as a stand-in
 * for a slice of a file: the same slice always has the same bytes.
 */
export function readSlice({ slice, records }) {
  const raw = new ArrayBuffer(records * 16)
  const f64 = new Float64Array(raw)
  const u32 = new Uint32Array(raw)
  let x = ((slice + 1) * 2654435761) >>> 0
  for (let r = 0; r < records; r++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    f64[2 * r] = 20 + (x % 2000) / 100
    u32[4 * r + 2] = x & 63
    u32[4 * r + 3] = 0
  }
  // Parse: one pass over the records into a column of readings, the sensor
  // id kept in the same array's second half (one value per task result).
  const out = new Float64Array(records * 2)
  for (let r = 0; r < records; r++) {
    out[r] = f64[2 * r]
    out[records + r] = u32[4 * r + 2]
  }
  return out
}

/** Count, sum, sum of squares, min and max of a slice's readings. */
export function stats(cols) {
  const n = cols.length / 2
  let sum = 0
  let sumsq = 0
  let min = Infinity
  let max = -Infinity
  for (let r = 0; r < n; r++) {
    const v = cols[r]
    sum += v
    sumsq += v * v
    if (v < min) min = v
    if (v > max) max = v
  }
  return { n, sum, sumsq, min, max }
}

/** Sum of absolute deviations from `mean`: a second pass that needs the first's result. */
export function absDeviation(cols, mean) {
  const n = cols.length / 2
  let s = 0
  for (let r = 0; r < n; r++) s += Math.abs(cols[r] - mean)
  return { n, s }
}

export function meanAbsDeviation(parts) {
  let n = 0
  let s = 0
  for (const p of parts) {
    n += p.n
    s += p.s
  }
  return s / n
}

/** Readings above `limit`, per sensor: a Float64Array of 64 counts. */
export function exceedances(cols, limit) {
  const n = cols.length / 2
  const counts = new Float64Array(64)
  for (let r = 0; r < n; r++) if (cols[r] > limit) counts[cols[n + r]]++
  return counts
}

/** Adds per-sensor counts from every slice: the inputs come from every worker. */
export function addCounts(...parts) {
  const out = new Float64Array(64)
  for (const p of parts) for (let s = 0; s < 64; s++) out[s] += p[s]
  return out
}

export function combineStats(all) {
  const t = all.reduce((a, s) => ({ n: a.n + s.n, sum: a.sum + s.sum, sumsq: a.sumsq + s.sumsq, min: Math.min(a.min, s.min), max: Math.max(a.max, s.max) }))
  const mean = t.sum / t.n
  return { n: t.n, mean, std: Math.sqrt(t.sumsq / t.n - mean * mean), min: t.min, max: t.max }
}
