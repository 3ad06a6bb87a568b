import { readFileSync } from 'node:fs'
import { extname } from 'node:path'
import YAML from 'yaml'
import { ConfigError, type ConfigProblem } from '../base/errors'
import { closestName } from '../base/suggest'
import { KINDS, OPTIONS, OPTION_NAMES, optionDefaults, type Kind, type OptionSpec, type ResolvedOptions, type SetupOptions } from './options'
import { PROFILES } from './profiles'
import { isThreshold, thresholdAllowed, thresholdProblems } from './thresholds'

export { KINDS, OPTIONS, OPTION_NAMES, WORKLOAD_TYPES, CLUSTER_KINDS, type SetupOptions, type WorkloadType, type ClusterKind } from './options'
export { PROFILES, type Profile } from './profiles'

const FALSE_OPTIONS = OPTION_NAMES.filter((n) => (OPTIONS[n] as OptionSpec).orFalse)

function describeKind(kind: Kind, spec: OptionSpec, given: unknown): string {
  const what = kind === 'integer' ? 'an integer' : kind === 'size' ? "a number of bytes or a size such as '10 GiB'" : `a ${kind}`
  if (spec.orFalse) return `${what}, or false`
  // A false where it means nothing: say where it does (off, no cap).
  return given === false ? `${what}; false is allowed only for ${FALSE_OPTIONS.join(', ')}` : what
}

function hasKind(value: unknown, kind: Kind, spec: OptionSpec): boolean {
  if (value === false && spec.orFalse) return true
  if (kind === 'size') return (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'string'
  if (kind === 'integer') return typeof value === 'number' && Number.isInteger(value)
  if (kind === 'number') return typeof value === 'number' && Number.isFinite(value)
  return typeof value === kind
}

/** Merges option layers; `undefined` (and YAML's null) means "not given", so it never hides a lower layer. */
function mergeOptions(...layers: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) if (v !== undefined && v !== null) out[k] = v
  }
  return out
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A validated, frozen set of options: every option of OPTIONS as a read-only field, defaults applied. */
// The interface gives the class its fields, from the one declaration.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface SetupConfig extends ResolvedOptions {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SetupConfig {
  /** Validates everything at once: one ConfigError lists every bad field. */
  constructor(options: SetupOptions | SetupConfig = {}, what = 'configuration') {
    const raw: unknown = options instanceof SetupConfig ? options.toJSON() : options
    if (!isPlainObject(raw)) {
      throw new ConfigError([{ field: 'options', value: raw, allowed: 'an object of setup options' }], what)
    }
    const problems: ConfigProblem[] = []
    let base: SetupOptions = {}
    const profileName = raw.profile
    if (profileName !== undefined && profileName !== null) {
      // Own names only: 'toString' or '__proto__' would otherwise find Object.prototype's members.
      const found = typeof profileName === 'string' && Object.hasOwn(PROFILES, profileName) ? PROFILES[profileName] : undefined
      if (found) base = found.options
      // A non-string profile is reported by the type check below.
      else if (typeof profileName === 'string') problems.push({ field: 'profile', value: profileName, allowed: `one of ${Object.keys(PROFILES).join(', ')}` })
    }
    const merged = mergeOptions(base as Record<string, unknown>, raw)
    const opts: Record<string, unknown> = {}
    const mistyped = new Set<string>()
    for (const [name, value] of Object.entries(merged)) {
      const kind = (KINDS as Record<string, Kind | undefined>)[name]
      if (!kind) {
        const guess = closestName(name, OPTION_NAMES)
        problems.push({
          field: name,
          value,
          allowed: guess ? `no such option; did you mean ${guess}?` : `no such option; known options: ${OPTION_NAMES.join(', ')}`,
        })
      } else if (!hasKind(value, kind, OPTIONS[name as keyof typeof OPTIONS] as OptionSpec)) {
        problems.push({ field: name, value, allowed: describeKind(kind, OPTIONS[name as keyof typeof OPTIONS] as OptionSpec, value) })
        mistyped.add(name)
      } else {
        opts[name] = value
      }
    }
    const o = mergeOptions(optionDefaults(), opts)
    checkValues(o, mistyped, problems)
    if (problems.length > 0) throw new ConfigError(problems, what)
    for (const name of OPTION_NAMES) if (o[name] !== undefined) (this as Record<string, unknown>)[name] = o[name]
    Object.freeze(this)
  }

  /** A built-in profile by name, with explicit options on top. */
  static profile(name: string, overrides: SetupOptions = {}): SetupConfig {
    return new SetupConfig({ ...overrides, profile: name })
  }

  /**
   * A profile from a JSON or YAML file. Keys may be camelCase or dask_setup's snake_case, at the
   * top level or under `config:` (dask_setup's profile layout); `profile:` (or dask_setup's
   * `based_on:`) names a built-in profile as the base. Explicit overrides win over the file.
   */
  static fromFile(path: string, overrides: SetupOptions = {}): SetupConfig {
    const what = `profile file ${path}`
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      throw new ConfigError([{ field: 'path', value: path, allowed: `a readable file (${(err as Error).message})` }], what, { cause: err })
    }
    let data: unknown
    try {
      // YAML is a superset of JSON, but JSON.parse gives the clearer error for a .json file.
      data = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : YAML.parse(text)
    } catch (err) {
      throw new ConfigError([{ field: 'path', value: path, allowed: `valid JSON or YAML (${(err as Error).message})` }], what, { cause: err })
    }
    if (!isPlainObject(data)) {
      throw new ConfigError([{ field: 'path', value: path, allowed: 'a JSON or YAML object of setup options' }], what)
    }
    return new SetupConfig({ ...profileFileOptions(data), ...withoutUndefined(overrides) }, what)
  }

  /** Every option that is set, under its option name: `new SetupConfig(c.toJSON())` is the same config. */
  toJSON(): SetupOptions {
    const out: Record<string, unknown> = {}
    for (const name of OPTION_NAMES) {
      const v = (this as Record<string, unknown>)[name]
      if (v !== undefined) out[name] = v
    }
    return out as SetupOptions
  }
}

function withoutUndefined(o: SetupOptions): SetupOptions {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as SetupOptions
}

// Profile metadata dask_setup writes next to the options; it does not configure anything.
const FILE_METADATA = new Set(['name', 'description', 'tags', 'version', 'builtin', 'createdAt', 'modifiedAt'])

function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

function profileFileOptions(data: Record<string, unknown>): Record<string, unknown> {
  const top: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(data)) top[snakeToCamel(k)] = v
  const nested = isPlainObject(top.config) ? top.config : undefined
  const out: Record<string, unknown> = {}
  const base = top.profile ?? top.basedOn
  if (base !== undefined && base !== null) out.profile = base
  for (const [k, v] of Object.entries(nested ?? top)) {
    const key = snakeToCamel(k)
    if (key === 'basedOn') continue
    if (!nested && (key === 'config' || FILE_METADATA.has(key))) continue
    out[key] = v
  }
  return out
}

function checkValues(o: Record<string, unknown>, mistyped: Set<string>, problems: ConfigProblem[]): void {
  // A mistyped field was already reported and `o` holds its default instead; checking that default
  // (e.g. threshold order against it) would report a value the user never gave.
  const ok = (field: string) => !mistyped.has(field) && o[field] !== undefined
  const bad = (field: string, allowed: string) => problems.push({ field, value: o[field], allowed })
  for (const name of OPTION_NAMES) {
    if (!ok(name) || o[name] === false) continue
    const spec = OPTIONS[name] as OptionSpec
    if (spec.values && !spec.values.includes(o[name])) bad(name, `one of ${spec.values.map((w) => `'${w}'`).join(', ')}`)
    else {
      const why = spec.check?.(o[name])
      if (why) bad(name, why)
    }
  }
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) bad(o.tlsCert === undefined ? 'tlsCert' : 'tlsKey', 'tlsCert and tlsKey together (PEM files)')
  const maxMem = o.maxMemGb as number | undefined
  const reserve = o.reserveMemGb as number | undefined
  if (maxMem !== undefined && reserve !== undefined && maxMem > 0 && reserve > maxMem) {
    bad('reserveMemGb', `at most maxMemGb (${maxMem}): the reserve comes out of maxMemGb`)
  }
  const field = (n: string) => `memory${n[0].toUpperCase()}${n.slice(1)}`
  const given = ['target', 'spill', 'pause', 'terminate'].every((n) => !mistyped.has(field(n)))
  if (given) {
    const t = { target: o.memoryTarget, spill: o.memorySpill, pause: o.memoryPause, terminate: o.memoryTerminate }
    for (const p of thresholdProblems(t, field)) bad(field(p.name), p.allowed)
  } else {
    // Only the well-typed ones can be checked for range.
    for (const n of ['target', 'spill', 'pause', 'terminate'] as const) {
      if (mistyped.has(field(n))) continue
      if (!isThreshold(n, o[field(n)])) bad(field(n), thresholdAllowed(n, field))
    }
  }
}
