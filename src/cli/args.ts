import { SpillwayError } from '../errors'
import { KINDS } from '../config'
import { closestName } from '../suggest'

/** A command line that cannot be understood; main() turns it into exit code 2. */
export class UsageError extends SpillwayError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('ERR_SPILLWAY_USAGE', message, details)
    this.name = 'UsageError'
  }
}

export type FlagType = 'string' | 'number' | 'boolean'

/** Flags a command accepts, by camelCase name; on the command line they are kebab-case. */
export type FlagSpec = Record<string, FlagType>

/** Every SetupOptions field as a flag, plus --config for a profile file; shared by info, demo, bench. */
export const SETUP_FLAGS: FlagSpec = {
  config: 'string',
  // Derived from the config's own table so a new option is a flag at once.
  ...Object.fromEntries(Object.entries(KINDS).map(([name, kind]) => [name, kind === 'integer' ? 'number' : kind])),
}

export function kebabToCamel(s: string): string {
  return s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

export function camelToKebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
}

export interface ParsedArgs {
  /** Flag values by camelCase name, typed by the spec. */
  flags: Record<string, string | number | boolean>
  positionals: string[]
  help: boolean
}

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/**
 * `--name value`, `--name=value`, `--bool`, `--no-bool`, `--bool=false`; `--` ends the flags.
 * Unknown flags and unparsable values are UsageErrors naming the flag, never ignored.
 */
export function parseArgs(argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const out: ParsedArgs = { flags: {}, positionals: [], help: false }
  const known = Object.keys(spec).map((k) => `--${camelToKebab(k)}`)
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      out.positionals.push(...argv.slice(i + 1))
      break
    }
    if (arg === '-h' || arg === '--help') {
      out.help = true
      continue
    }
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-') && arg.length > 1) throw new UsageError(`unknown flag ${arg}; flags are spelt --like-this`, { flag: arg })
      out.positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const rawName = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    let inline: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1)
    let name = kebabToCamel(rawName)
    let type = spec[name]
    if (!type && rawName.startsWith('no-') && spec[kebabToCamel(rawName.slice(3))] === 'boolean' && inline === undefined) {
      name = kebabToCamel(rawName.slice(3))
      type = 'boolean'
      inline = 'false'
    }
    if (!type) {
      const guess = closestName(`--${rawName}`, known)
      throw new UsageError(`unknown flag --${rawName}${guess ? `; did you mean ${guess}?` : ''}`, { flag: `--${rawName}` })
    }
    const flag = `--${camelToKebab(name)}`
    if (type === 'boolean') {
      if (inline === undefined) {
        out.flags[name] = true
        continue
      }
      const v = inline.toLowerCase()
      if (TRUE.has(v)) out.flags[name] = true
      else if (FALSE.has(v)) out.flags[name] = false
      else throw new UsageError(`${flag} expects true or false, got ${JSON.stringify(inline)}`, { flag, value: inline })
      continue
    }
    let value = inline
    if (value === undefined) {
      value = argv[i + 1]
      if (value === undefined || (value.startsWith('--') && value.length > 2)) throw new UsageError(`${flag} needs a value`, { flag })
      i++
    }
    if (type === 'number') {
      const n = value.trim() === '' ? NaN : Number(value)
      if (!Number.isFinite(n)) throw new UsageError(`${flag} expects a number, got ${JSON.stringify(value)}`, { flag, value })
      out.flags[name] = n
    } else {
      out.flags[name] = value
    }
  }
  return out
}

/** Help lines for a spec: `  --max-mem-gb <number>`. */
export function describeFlags(spec: FlagSpec): string[] {
  return Object.entries(spec).map(([name, type]) => `  --${camelToKebab(name)}${type === 'boolean' ? '' : ` <${type}>`}`)
}

/**
 * Parses the command line of a command that takes flags only. Returns
 * undefined once `--help` has been printed; a stray argument is a UsageError.
 */
export function parseCommand(argv: readonly string[], spec: FlagSpec, help: () => string): ParsedArgs['flags'] | undefined {
  const parsed = parseArgs(argv, spec)
  if (parsed.help) {
    process.stdout.write(help() + '\n')
    return undefined
  }
  if (parsed.positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`)
  return parsed.flags
}
