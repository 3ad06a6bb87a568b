// Futures nested in arguments (arrays and plain objects, at any depth): found
// and replaced by null with their paths at submit, put back as values on the
// worker, and swapped for results by gather.

export type Path = Array<string | number>

export interface Slot<T> {
  path: Path
  item: T
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/**
 * A copy of `value` with every `match`ed item replaced by `replacement`,
 * and where each was. Containers without a match are shared, not copied.
 */
export function extract<T>(value: unknown, match: (v: unknown) => v is T, replacement: unknown = null): { value: unknown; slots: Slot<T>[] } {
  const slots: Slot<T>[] = []
  const seen = new Set<object>()
  const walk = (v: unknown, path: Path): unknown => {
    if (match(v)) {
      slots.push({ path: [...path], item: v })
      return replacement
    }
    const arr = Array.isArray(v)
    if (!arr && !isPlainObject(v)) return v
    // A cycle holds no Future we could reach that we have not already seen.
    if (seen.has(v as object)) return v
    seen.add(v as object)
    const before = slots.length
    let out: unknown
    if (arr) {
      out = (v as unknown[]).map((x, i) => {
        path.push(i)
        const r = walk(x, path)
        path.pop()
        return r
      })
    } else {
      const o: Record<string, unknown> = Object.getPrototypeOf(v) === null ? Object.create(null) : {}
      for (const k of Object.keys(v as object)) {
        path.push(k)
        setOwn(o, k, walk((v as Record<string, unknown>)[k], path))
        path.pop()
      }
      out = o
    }
    seen.delete(v as object)
    return slots.length === before ? v : out
  }
  const value_ = walk(value, [])
  return { value: value_, slots }
}

/** Puts `item` at `path` inside `root` (which extract copied, so it is ours). Returns the new root. */
export function place(root: unknown, path: Path, item: unknown): unknown {
  if (path.length === 0) return item
  let c: any = root
  for (let i = 0; i < path.length - 1; i++) c = Object.hasOwn(c, path[i]) ? c[path[i]] : undefined
  setOwn(c, path[path.length - 1], item)
  return root
}

/** `o[k] = v`, except that a key '__proto__' becomes an own entry instead of replacing the prototype. */
function setOwn(o: Record<string | number, unknown>, k: string | number, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true })
  else o[k] = v
}

/**
 * `root` (which extract copied) without the items at `paths`: an array
 * loses the element, an object the property. An empty path (the root
 * itself) leaves undefined.
 */
export function dropAt(root: unknown, paths: Path[]): unknown {
  if (paths.some((p) => p.length === 0)) return undefined
  const byParent = new Map<any, Set<string | number>>()
  for (const path of paths) {
    let c: any = root
    for (let i = 0; i < path.length - 1; i++) c = c[path[i]]
    const drop = byParent.get(c) ?? byParent.set(c, new Set()).get(c)!
    drop.add(path[path.length - 1])
  }
  // Every parent is found before any changes: dropping an element shifts the indices later paths walk through.
  for (const [parent, drop] of byParent) {
    if (Array.isArray(parent)) {
      let j = 0
      for (let i = 0; i < parent.length; i++) if (!drop.has(i)) parent[j++] = parent[i]
      parent.length = j
    } else for (const k of drop) delete parent[k]
  }
  return root
}
