import { parseArgs as utilParseArgs } from 'node:util'
import { SpillwayError } from '../base/errors'
import { OPTIONS, KINDS } from '../config/options'
import { closestName } from '../base/suggest'

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
  ...Object.fromEntries(Object.entries(KINDS).map(([name, kind]) => [name, kind === 'integer' ? 'number' : kind === 'size' ? 'string' : kind])),
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

/** Options whose off is false, beside a number or a size (memoryTarget, memorySpill, maxSpill). */
const offable = (name: string) => Object.hasOwn(OPTIONS, name) && (OPTIONS[name as keyof typeof OPTIONS] as { orFalse?: boolean }).orFalse === true

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/**
 * `--name value`, `--name=value`, `--bool`, `--no-bool`, `--bool=false`; `--` ends the flags.
 * node:util's parseArgs splits the command line into tokens (its strict mode
 * would refuse `--bool=false` and `--no-bool` on Node 20, and its errors do
 * not suggest the flag meant); the tokens are then typed here, and unknown
 * flags and unparsable values are UsageErrors naming the flag, never ignored.
 */
export function parseArgs(argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const out: ParsedArgs = { flags: {}, positionals: [], help: false }
  const known = Object.keys(spec).map((k) => `--${camelToKebab(k)}`)
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } }
  for (const [name, type] of Object.entries(spec)) options[camelToKebab(name)] = { type: type === 'boolean' ? 'boolean' : 'string' }
  for (const arg of argv) {
    // A single-dash word would be read as a cluster of short flags.
    if (/^-[^-\d.]/.test(arg) && arg !== '-h') throw new UsageError(`unknown flag ${arg}; flags are spelt --like-this`, { flag: arg })
    if (arg === '--') break
  }
  const { tokens } = utilParseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true })
  for (const tok of tokens) {
    if (tok.kind === 'positional') {
      out.positionals.push(tok.value)
      continue
    }
    if (tok.kind === 'option-terminator') continue
    if (tok.name === 'help') {
      out.help = true
      continue
    }
    let name = kebabToCamel(tok.name)
    let type = spec[name]
    let inline = tok.inlineValue ? tok.value : undefined
    if (!type && tok.name.startsWith('no-') && inline === undefined) {
      const off = kebabToCamel(tok.name.slice(3))
      if (spec[off] === 'boolean') {
        name = off
        type = 'boolean'
        inline = 'false'
      } else if (spec[off] && offable(off)) {
        // `--no-memory-target`: off, as `--memory-target false`.
        out.flags[off] = false
        continue
      }
    }
    if (!type) {
      const guess = closestName(`--${tok.name}`, known)
      throw new UsageError(`unknown flag --${tok.name}${guess ? `; did you mean ${guess}?` : ''}`, { flag: `--${tok.name}` })
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
    const value = tok.value
    if (value === undefined || (!tok.inlineValue && value.startsWith('--') && value.length > 2)) throw new UsageError(`${flag} needs a value`, { flag })
    // `--memory-target false`, `--max-spill off`: the options whose off is false.
    if (FALSE.has(value.toLowerCase()) && value !== '0' && offable(name)) {
      out.flags[name] = false
      continue
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
  return Object.entries(spec).map(([name, type]) => {
    const flag = `  --${camelToKebab(name)}${type === 'boolean' ? '' : ` <${type}>`}`
    const doc = Object.hasOwn(OPTIONS, name) ? OPTIONS[name as keyof typeof OPTIONS].doc : name === 'config' ? 'a profile file (JSON or YAML) as the base' : undefined
    return doc ? `${flag.padEnd(30)} ${doc}` : flag
  })
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
