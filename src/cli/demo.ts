// `spillway demo`: the memory management recipe end to end, on this machine,
// printing what the recipe prints: system memory, the configuration
// summary, the pressure test with its monitoring line, the cluster report,
// the timeline (as an SVG), the codec comparison, the conservative config
// and the tuning summary. --json prints every figure instead.

import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { availableCodecs, shuffledCodecs, validCodecNames } from '../native/codecs'
import { progressEnabled } from '../client/progress'
import { timelineChart } from '../reporting/chart'
import type { Resources } from '../config/resources'
import { describeFlags, parseCommand, UsageError, type FlagSpec } from './args'
import {
  compressionSection,
  conservativeSection,
  pressureSection,
  SIZES,
  systemSection,
  timelineSection,
  tuningSection,
  type CompressionFigures,
  type DemoContext,
  type PressureFigures,
  type SizeName,
  type TuningFigures,
} from './demo-sections'

const FLAGS: FlagSpec = {
  size: 'string',
  codecs: 'string',
  out: 'string',
  json: 'boolean',
  tempBaseDir: 'string',
}

export const CHART_FILE = 'memory-timeline.svg'
export const JSON_FILE = 'demo.json'

/** Every figure of a demo run, as written to demo.json and printed by --json. */
export interface DemoFigures {
  size: SizeName
  outDir: string
  chartPath: string
  jsonPath: string
  system: Resources
  pressure: PressureFigures
  compression: CompressionFigures
  conservative: Record<string, unknown>
  tuning: TuningFigures
  wallSeconds: number
}

function help(): string {
  const sizes = Object.entries(SIZES)
    .map(([name, s]) => `  ${name.padEnd(7)} pressure ${s.pressure.n}×${s.pressure.n} float64 (chunks ${s.pressure.chunk}), comparison ${s.compression.n}×${s.compression.n} int64`)
    .join('\n')
  return [
    'Usage: spillway demo [--size small|medium|full] [--codecs auto,lz4,...] [--out DIR] [--json]',
    '',
    "Runs the memory management recipe on this machine: system memory, the pressure test on a cluster",
    'capped at maxMemGb 3 / reserveMemGb 1 / 2 workers (an array about 1.5× the workers’ memory, then its',
    'mean), the cluster report, the memory and spill timeline as an SVG, the spill codec comparison (one',
    "cluster per codec), the conservative profile and tuneMemoryThresholds(). Needs about 4 GiB free.",
    '',
    'Sizes (default medium; full is the recipe’s own):',
    sizes,
    '',
    `--codecs   codecs to compare, comma-separated (default: auto and every one compiled in: ${availableCodecs().join(', ')}; also ${shuffledCodecs().join(', ')})`,
    `--out      directory for ${CHART_FILE} and ${JSON_FILE} (default: a new directory under the OS temp dir)`,
    '--json     print only the figures, as JSON',
    '',
    'Options:',
    ...describeFlags(FLAGS),
  ].join('\n')
}

/**
 * Writes 0600 through a fresh temp file in the same directory and a rename,
 * so a symlink planted at `path` (e.g. in a shared --out dir) is replaced
 * rather than followed, and no reader ever sees a half-written file.
 */
function writePrivate(path: string, data: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    // 'wx' refuses an existing name, a symlink included.
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' })
    renameSync(tmp, path)
  } catch (e) {
    rmSync(tmp, { force: true })
    throw e
  }
}

function parseCodecs(v: unknown): string[] {
  const valid = validCodecNames()
  if (v === undefined) return ['auto', ...availableCodecs()]
  const list = String(v)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const bad = list.filter((c) => !valid.includes(c))
  if (bad.length || !list.length) {
    throw new UsageError(`--codecs: unknown ${bad.map((c) => `'${c}'`).join(', ') || '(none given)'}; valid here: ${valid.join(', ')}`, { flag: '--codecs', value: v })
  }
  return [...new Set(list)]
}

export async function run(argv: string[]): Promise<number> {
  const f = parseCommand(argv, FLAGS, help)
  if (!f) return 0
  const size = (f.size ?? 'medium') as string
  if (!Object.hasOwn(SIZES, size)) throw new UsageError(`--size expects ${Object.keys(SIZES).join(', ')}, got ${JSON.stringify(size)}`, { flag: '--size', value: size })
  const sz = SIZES[size as SizeName]
  const codecs = parseCodecs(f.codecs)
  const json = f.json === true
  const outDir = f.out !== undefined ? resolve(String(f.out)) : mkdtempSync(join(tmpdir(), 'spillway-demo-'))
  // Only this user should list or swap files in a directory we create; an existing one keeps the mode its owner chose.
  mkdirSync(outDir, { recursive: true, mode: 0o700 })
  const chartPath = join(outDir, CHART_FILE)
  const jsonPath = join(outDir, JSON_FILE)

  const ctx: DemoContext = {
    out: json ? () => {} : (line = '') => process.stdout.write(line + '\n'),
    progress: !json && progressEnabled(),
    verbose: !json,
    tempBaseDir: f.tempBaseDir === undefined ? undefined : String(f.tempBaseDir),
  }
  const start = performance.now()
  const p = sz.pressure
  ctx.out(`🚀 spillway demo (size ${size}): the memory management recipe on this machine`)

  const system = await systemSection(ctx)
  const pressure = await pressureSection(ctx, p)
  writePrivate(chartPath, timelineChart(pressure.timeline, { title: `Memory and spill during the pressure test (${p.n}×${p.n} float64)` }))
  timelineSection(ctx, pressure.timeline, chartPath)
  const compression = await compressionSection(ctx, sz.compression, codecs)
  const conservative = conservativeSection(ctx)
  const tuning = await tuningSection(ctx, p)

  const figures: DemoFigures = {
    size: size as SizeName,
    outDir,
    chartPath,
    jsonPath,
    system,
    pressure,
    compression,
    conservative,
    tuning,
    wallSeconds: (performance.now() - start) / 1000,
  }
  const text = JSON.stringify(figures, null, 2)
  writePrivate(jsonPath, text + '\n')
  if (json) {
    process.stdout.write(text + '\n')
  } else {
    ctx.out('')
    ctx.out(`✅ Demo complete in ${figures.wallSeconds.toFixed(1)} s. Chart: ${chartPath} | figures: ${jsonPath}`)
  }
  return 0
}
