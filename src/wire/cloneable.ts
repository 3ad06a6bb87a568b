// Whether a value can cross to a worker: messages go through v8's
// serializer (the IPC channel's 'advanced' mode, the TCP frames), which
// refuses functions, symbols and host objects. Caught at submit, so a task
// that cannot be sent fails there, naming the part that cannot go, instead
// of failing the send later (which looks like a lost worker).

import { serialize } from 'node:v8'

function sendable(v: unknown): boolean {
  try {
    serialize(v)
    return true
  } catch {
    return false
  }
}

function describe(v: unknown): string {
  if (typeof v === 'function') return `a function${v.name ? ` (${v.name})` : ''}`
  if (typeof v === 'symbol') return `a symbol (${String(v.description)})`
  if (v !== null && typeof v === 'object') return `an object v8.serialize refuses (${(v as object).constructor?.name ?? 'null prototype'})`
  return typeof v
}

/** The first part of `value` that cannot be sent, as a path below `root` (`args[0].f`) and what it is; undefined when it all can. */
export function unsendable(value: unknown, root: string): { path: string; what: string } | undefined {
  if (sendable(value)) return undefined
  let path = root
  let at = value
  // Down through the containers whose own serialisation fails, to the smallest part that fails.
  for (const seen = new Set<unknown>(); at !== null && typeof at === 'object' && !seen.has(at); ) {
    seen.add(at)
    const entries: [string, unknown][] =
      at instanceof Map ? [...at.entries()].flatMap(([k, v], i) => [[`<key ${i}>`, k], [`.get(${i})`, v]] as [string, unknown][]) : at instanceof Set ? [...at].map((v, i) => [`<item ${i}>`, v]) : Object.entries(at)
    const bad = entries.find(([, v]) => !sendable(v))
    if (!bad) break
    const [k, v] = bad
    path += Array.isArray(at) ? `[${k}]` : at instanceof Map || at instanceof Set ? ` ${k}` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`
    at = v
  }
  return { path, what: describe(at) }
}
