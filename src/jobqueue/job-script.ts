// Job scripts: a header of directives for the batch system, the user's
// prologue, and one line that starts this node's workers for the scheduler
// (`spillway worker --scheduler-file …`). The flavours (slurm.ts, pbs.ts)
// give the header; the rest is shared.

import type { ResolvedJobOptions } from './options'

/** A word the shell passes through as written. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\-./:=@%+,]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * Workers retire before the walltime so the scheduler moves on before the
 * batch system kills them: 10% of it, at most 5 minutes, earlier; each
 * worker a further random part of half that, so they do not leave at once.
 */
export function lifetimeOf(walltimeSeconds: number): { lifetime: number; stagger: number } {
  const margin = Math.min(300, Math.ceil(walltimeSeconds * 0.1))
  return { lifetime: walltimeSeconds - margin, stagger: Math.floor(margin / 2) }
}

export function workerCommand(o: ResolvedJobOptions, schedulerFile: string): string {
  const gib = Math.floor((o.memoryBytes / 2 ** 30) * 100) / 100
  const { lifetime, stagger } = lifetimeOf(o.walltimeSeconds)
  const args = [
    ...o.command,
    'worker',
    '--scheduler-file',
    schedulerFile,
    '--max-workers',
    String(o.processes),
    '--threads-per-worker',
    String(Math.max(1, Math.floor(o.cores / o.processes))),
    '--max-mem-gb',
    String(gib),
    '--reserve-mem-gb',
    '0',
    '--death-timeout',
    String(o.deathTimeout),
    '--lifetime',
    String(lifetime),
    '--lifetime-stagger',
    String(stagger),
    ...(o.interface ? ['--interface', o.interface] : []),
    ...(o.tempBaseDir ? ['--temp-base-dir', o.tempBaseDir] : []),
  ]
  return args.map(shellQuote).join(' ')
}

/** The whole script: `prefix` before each directive, skipped ones left out. */
export function assembleScript(prefix: string, directives: string[], o: ResolvedJobOptions, schedulerFile: string): string {
  const header = [...directives, ...o.jobExtraDirectives].filter((d) => !o.jobDirectivesSkip.some((s) => d.includes(s))).map((d) => `${prefix} ${d}`)
  return ['#!/usr/bin/env bash', '', ...header, '', ...o.jobScriptPrologue, `exec ${workerCommand(o, schedulerFile)}`, ''].join('\n')
}
