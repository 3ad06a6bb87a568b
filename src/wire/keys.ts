// Keys as the workers' native store can hold them. The store keys by UTF-8,
// where every lone surrogate becomes U+FFFD: 'k-\ud800' and 'k-\udfff' would
// be one key there, the second value replacing the first. Such keys are
// refused where they enter, so two keys that differ in JS never meet there.

import { ArgumentError, type ConfigProblem } from '../base/errors'

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The problem with a key, if any (a lone surrogate, which UTF-8 cannot hold). */
export function keyProblem(key: string, field: string): ConfigProblem | undefined {
  if (!LONE_SURROGATE.test(key)) return undefined
  return { field, value: key, allowed: 'a key of whole Unicode characters (this one holds a lone surrogate, which UTF-8 cannot store)' }
}

/** Throws ERR_SPILLWAY_INVALID_ARGUMENT naming every key that cannot be stored. */
export function checkKeys(keys: Iterable<{ key: string; field: string }>, what: string): void {
  const problems: ConfigProblem[] = []
  for (const { key, field } of keys) {
    const p = keyProblem(key, field)
    if (p) problems.push(p)
  }
  if (problems.length) throw new ArgumentError(problems, what)
}
