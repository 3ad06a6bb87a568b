/** Edit distance, so a misspelt option or flag gets a "did you mean" instead of being ignored. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = above
    }
  }
  return prev[b.length]
}

// snake_case (dask_setup's spelling), kebab-case (CLI flags) and case slips all count as the same name.
function squash(s: string): string {
  return s.replace(/[-_\s]/g, '').toLowerCase()
}

/** The known name closest to `name`, or undefined when nothing is plausibly what was meant. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const target = squash(name)
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const d = editDistance(target, squash(candidate))
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  const tolerance = Math.max(2, Math.floor(target.length / 3))
  return bestDistance <= tolerance ? best : undefined
}
