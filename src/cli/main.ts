import { ConfigError, SpillwayError } from '../base/errors'
import { closestName } from '../base/suggest'
import { UsageError } from './args'
import { VERSION } from '../base/version'

/** A subcommand module: `run` returns the process exit code. */
export interface CommandModule {
  run(argv: string[]): Promise<number>
}

export interface Command {
  summary: string
  /** Loaded lazily, so `spillway info` does not pay for the cluster runtime and vice versa. */
  load: () => Promise<CommandModule>
}

/** Subcommands. Add one by adding an entry (e.g. demo, bench) whose module exports `run`. */
export const COMMANDS: Record<string, Command> = {
  info: {
    summary: 'system memory analysis, the limits on this process, and the sizing setupClient would choose',
    load: () => import('./info'),
  },
  demo: {
    summary: "the memory management recipe end to end: pressure test, report, timeline chart, codec comparison, tuning",
    load: () => import('./demo'),
  },
  worker: {
    summary: 'workers on this node that join a scheduler elsewhere: `spillway worker --scheduler-file FILE`',
    load: () => import('./worker'),
  },
  bench: {
    summary: 'benchmarks on this machine: `spillway bench codecs` (ratio and MB/s of every codec and level)',
    load: () => import('./bench-codecs'),
  },
}

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length))
  return [
    'Usage: spillway <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `spillway <command> --help` for the options of a command, `spillway --version` for the version.',
  ].join('\n')
}

/** Exit codes: 0 ok, 1 failure while running, 2 a command line or configuration the user must fix. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const out = name === undefined ? process.stderr : process.stdout
    out.write(usage() + '\n')
    return name === undefined ? 2 : 0
  }
  // Only before a command: `spillway info -v` is the command's to read.
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (!command) {
    const guess = closestName(name, Object.keys(COMMANDS))
    process.stderr.write(`spillway: unknown command ${JSON.stringify(name)}${guess ? `; did you mean ${guess}?` : ''}\n\n${usage()}\n`)
    return 2
  }
  try {
    const mod = await command.load()
    return await mod.run(rest)
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`spillway ${name}: ${err.message}\n`)
      return 2
    }
    if (err instanceof SpillwayError) {
      process.stderr.write(`spillway ${name}: ${err.message}\n`)
      return 1
    }
    throw err
  }
}
