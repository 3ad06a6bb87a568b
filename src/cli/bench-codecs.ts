// `spillway bench codecs`: ratio and compress / decompress throughput of every
// codec and level compiled in, on the user's own file or on synthetic data,
// so a spill codec can be chosen from figures measured on this machine.
//
// Honest figures: each configuration is warmed up first, only the
// compress / decompress calls are timed, every run covers the same data, the
// median of the runs is shown with their spread (min–max), and the roundtrip
// is checked once per configuration (outside the timed calls).

import { closeSync, openSync, readSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { generateChunk } from '../native/chunks'
import { availableCodecs, compress, decompress, shuffledCodecs } from '../native/codecs'
import { SpillwayError } from '../base/errors'
import { ProgressBar } from '../client/progress'
import { describeFlags, parseCommand, UsageError, type FlagSpec } from './args'

const MIB = 2 ** 20

/** Codecs and levels measured, in table order; those not compiled in are skipped. */
export const BENCH_LEVELS: ReadonlyArray<{ codec: string; level?: number }> = [
  { codec: 'lz4' },
  { codec: 'snappy' },
  { codec: 'zstd', level: 1 },
  { codec: 'zstd', level: 3 },
  { codec: 'zstd', level: 9 },
  { codec: 'zstd', level: 19 },
  { codec: 'zlib', level: 1 },
  { codec: 'zlib', level: 6 },
  { codec: 'zlib', level: 9 },
  { codec: 'none' },
  // Blosc's byte shuffle first: what numeric data gains from it.
  { codec: 'lz4+shuffle' },
  { codec: 'zstd+shuffle', level: 1 },
  { codec: 'zstd+shuffle', level: 3 },
  { codec: 'zstd+shuffle', level: 9 },
]

/** The element types --dtype reads a file as, and their sizes (the shuffle's unit). */
export const DTYPES: Readonly<Record<string, number>> = { float32: 4, float64: 8, int32: 4, int64: 8, int16: 2, uint8: 1 }

const FLAGS: FlagSpec = {
  file: 'string',
  chunkMb: 'number',
  maxMb: 'number',
  repeat: 'number',
  budget: 'number',
  codecs: 'string',
  dtype: 'string',
  json: 'boolean',
}

export interface Throughput {
  /** MB/s (10^6 bytes per second) of the median run. */
  median: number
  min: number
  max: number
  /** Every run, MB/s, in the order run. */
  samples: number[]
}

export interface CodecResult {
  data: string
  codec: string
  /** null for codecs without levels. */
  level: number | null
  inputBytes: number
  /** Bytes of the compressed frames (header included), as they would be spilled. */
  compressedBytes: number
  ratio: number
  runs: number
  compressMBps: Throughput
  decompressMBps: Throughput
  /** Decompressed bytes equalled the input (checked once, untimed). */
  roundtrip: true
}

export interface CodecBench {
  source:
    | { kind: 'synthetic'; chunkBytes: number; datasets: string[] }
    | { kind: 'file'; path: string; fileBytes: number; usedBytes: number; chunks: number; chunkBytes: number; dtype?: string }
  repeat: number
  budgetSeconds: number
  codecsAvailable: string[]
  results: CodecResult[]
}

export interface Dataset {
  name: string
  chunks: Buffer[]
  /** Bytes per value, for the shuffle codecs (unknown: they shuffle 8-byte values, as Blosc does). */
  elementSize?: number
}

export interface BenchOptions {
  /** Runs per configuration (default 5). */
  repeat?: number
  /** Stop repeating a configuration once its timed calls pass this many seconds (default 10); at least one run. */
  budgetSeconds?: number
  /** Only these codecs (default: every one compiled in). */
  codecs?: string[]
  onConfigDone?: () => void
}

/** The synthetic datasets: float64 random in [0, 1) (barely compressible) and int64 randint(0, 10). */
export async function syntheticDatasets(chunkBytes: number): Promise<Dataset[]> {
  const len = Math.max(1, Math.floor(chunkBytes / 8))
  return [
    { name: 'float64 random', chunks: [await generateChunk({ kind: 'random', seed: 1, chunkId: 0, len })], elementSize: 8 },
    { name: 'int64 randint(0,10)', chunks: [await generateChunk({ kind: 'randint', seed: 1, chunkId: 0, len, low: 0, high: 10 })], elementSize: 8 },
  ]
}

/**
 * Chunks of `chunkBytes` read from `path`; when the file is larger than
 * `maxBytes`, that many bytes of chunks spread evenly over it.
 */
export function fileDataset(path: string, chunkBytes: number, maxBytes: number): { dataset: Dataset; fileBytes: number } {
  let st
  try {
    st = statSync(path)
  } catch (e) {
    throw new UsageError(`--file ${path}: ${(e as Error).message}`, { flag: '--file', value: path })
  }
  if (!st.isFile()) throw new UsageError(`--file ${path} is not a regular file`, { flag: '--file', value: path })
  if (st.size === 0) throw new UsageError(`--file ${path} is empty`, { flag: '--file', value: path })
  const total = Math.ceil(st.size / chunkBytes)
  const take = Math.max(1, Math.min(total, Math.floor(maxBytes / chunkBytes)))
  const picks = take >= total ? Array.from({ length: total }, (_, i) => i) : Array.from({ length: take }, (_, i) => Math.floor((i * total) / take))
  const fd = openSync(path, 'r')
  const chunks: Buffer[] = []
  try {
    for (const i of picks) {
      const pos = i * chunkBytes
      const buf = Buffer.allocUnsafe(Math.min(chunkBytes, st.size - pos))
      let got = 0
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, pos + got)
        if (n === 0) break
        got += n
      }
      chunks.push(got === buf.length ? buf : buf.subarray(0, got))
    }
  } finally {
    closeSync(fd)
  }
  return { dataset: { name: basename(path), chunks }, fileBytes: st.size }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function throughput(bytes: number, seconds: number[]): Throughput {
  const samples = seconds.map((s) => bytes / 1e6 / Math.max(s, 1e-9))
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples }
}

const now = () => process.hrtime.bigint()
const secs = (a: bigint, b: bigint) => Number(b - a) / 1e9

/** Measures one codec and level on one dataset. */
export async function benchOne(ds: Dataset, codec: string, level: number | undefined, o: Required<Omit<BenchOptions, 'codecs' | 'onConfigDone'>>): Promise<CodecResult> {
  const inputBytes = ds.chunks.reduce((s, c) => s + c.length, 0)
  // Warm-up on a slice: the thread pool, allocator and codec tables, without
  // paying a whole slow pass (zstd 19) before the timed runs.
  const probe = ds.chunks[0].subarray(0, Math.min(ds.chunks[0].length, MIB))
  await decompress(await compress(probe, codec, level, ds.elementSize))

  const cTimes: number[] = []
  const dTimes: number[] = []
  let compressedBytes = 0
  let spent = 0
  for (let run = 0; run < o.repeat; run++) {
    const frames: Buffer[] = new Array(ds.chunks.length)
    let c = 0
    for (let i = 0; i < ds.chunks.length; i++) {
      const t0 = now()
      frames[i] = await compress(ds.chunks[i], codec, level, ds.elementSize)
      c += secs(t0, now())
    }
    let d = 0
    const outs: Buffer[] | undefined = run === 0 ? new Array(ds.chunks.length) : undefined
    for (let i = 0; i < frames.length; i++) {
      const t0 = now()
      const out = await decompress(frames[i])
      d += secs(t0, now())
      if (outs) outs[i] = out
    }
    if (outs) {
      // The roundtrip, once, outside the timed calls.
      compressedBytes = frames.reduce((s, f) => s + f.length, 0)
      for (let i = 0; i < outs.length; i++) {
        if (!outs[i].equals(ds.chunks[i])) {
          throw new SpillwayError('ERR_SPILLWAY_ROUNDTRIP', `${codec}${level === undefined ? '' : ` level ${level}`} did not give back chunk ${i} of ${ds.name}`)
        }
      }
    }
    cTimes.push(c)
    dTimes.push(d)
    spent += c + d
    if (spent >= o.budgetSeconds) break
  }
  return {
    data: ds.name,
    codec,
    level: level ?? null,
    inputBytes,
    compressedBytes,
    ratio: inputBytes / compressedBytes,
    runs: cTimes.length,
    compressMBps: throughput(inputBytes, cTimes),
    decompressMBps: throughput(inputBytes, dTimes),
    roundtrip: true,
  }
}

export function benchConfigs(codecs?: string[]): { codec: string; level?: number }[] {
  const have = new Set([...availableCodecs(), ...shuffledCodecs()])
  return BENCH_LEVELS.filter((c) => have.has(c.codec) && (!codecs || codecs.includes(c.codec)))
}

/** Every configuration on every dataset. */
export async function benchCodecs(datasets: Dataset[], options: BenchOptions = {}): Promise<CodecResult[]> {
  const o = { repeat: options.repeat ?? 5, budgetSeconds: options.budgetSeconds ?? 10 }
  const out: CodecResult[] = []
  for (const ds of datasets) {
    for (const { codec, level } of benchConfigs(options.codecs)) {
      out.push(await benchOne(ds, codec, level, o))
      options.onConfigDone?.()
    }
  }
  return out
}

function fmtRate(t: Throughput): string {
  const n = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2))
  return t.samples.length > 1 ? `${n(t.median)} (${n(t.min)}–${n(t.max)})` : n(t.median)
}

function mib(b: number): string {
  return `${(b / MIB).toFixed(1)} MiB`
}

export function formatBench(b: CodecBench): string {
  const src =
    b.source.kind === 'file'
      ? `${b.source.path}${b.source.dtype ? ` as ${b.source.dtype}` : ''}: ${b.source.chunks} chunk(s) of up to ${mib(b.source.chunkBytes)}, ${mib(b.source.usedBytes)} of ${mib(b.source.fileBytes)}`
      : `synthetic data, ${mib(b.source.chunkBytes)} per dataset`
  const lines = [
    'CODEC BENCHMARK',
    '='.repeat(50),
    `Data: ${src}`,
    `Codecs available here: ${b.codecsAvailable.join(', ')}`,
    `Runs: up to ${b.repeat} per codec and level after a warm-up (fewer once one takes over ${b.budgetSeconds} s); median (min–max) shown.`,
    'Only the compress / decompress calls are timed, one call at a time on one thread; MB = 10^6 bytes. Roundtrip verified for each.',
  ]
  const byData = new Map<string, CodecResult[]>()
  for (const r of b.results) (byData.get(r.data) ?? byData.set(r.data, []).get(r.data)!).push(r)
  for (const [data, rs] of byData) {
    lines.push('', `${data} (${mib(rs[0].inputBytes)})`)
    lines.push(`${'codec'.padEnd(14)}${'level'.padStart(6)}${'ratio'.padStart(8)}  ${'compress MB/s'.padEnd(22)}${'decompress MB/s'.padEnd(22)}${'runs'.padStart(4)}`)
    lines.push('-'.repeat(76))
    for (const r of rs) {
      lines.push(
        `${r.codec.padEnd(14)}${(r.level === null ? '-' : String(r.level)).padStart(6)}${r.ratio.toFixed(2).padStart(8)}  ${fmtRate(r.compressMBps).padEnd(22)}${fmtRate(r.decompressMBps).padEnd(22)}${String(r.runs).padStart(4)}`,
      )
    }
  }
  return lines.join('\n')
}

function help(): string {
  return [
    'Usage: spillway bench codecs [--file PATH [--dtype float64]] [--chunk-mb N] [--repeat N] [--codecs lz4,zstd] [--json]',
    '',
    'Compression ratio, compress MB/s and decompress MB/s of every codec and level compiled in',
    '(lz4, snappy, zstd 1/3/9/19, zlib 1/6/9, none, and lz4 and zstd 1/3/9 after Blosc\'s byte shuffle),',
    `on your own file (its values of --dtype ${Object.keys(DTYPES).join('|')}, which the shuffle regroups`,
    'byte by byte; without it, 8-byte values as Blosc assumes) read in chunks of --chunk-mb',
    '(default 32; at most --max-mb, default 256, spread over the file) or, without --file, on synthetic',
    'float64 random and int64 randint(0,10) chunks of --chunk-mb. Each codec and level is warmed up,',
    'then run --repeat times (default 5; fewer once its timed calls pass --budget seconds, default 10);',
    'the median and the min–max of the runs are shown.',
    '',
    'Options:',
    ...describeFlags(FLAGS),
  ].join('\n')
}

function positive(name: string, v: unknown, def: number, integer = false): number {
  if (v === undefined) return def
  const n = v as number
  if (!(n > 0) || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} expects a ${integer ? 'whole ' : ''}number > 0, got ${n}`, { flag: `--${name}`, value: n })
  return n
}

export async function runCodecs(argv: string[]): Promise<number> {
  const f = parseCommand(argv, FLAGS, help)
  if (!f) return 0
  const chunkBytes = Math.max(1, Math.round(positive('chunk-mb', f.chunkMb, 32) * MIB))
  const maxBytes = positive('max-mb', f.maxMb, 256) * MIB
  const repeat = positive('repeat', f.repeat, 5, true)
  const budgetSeconds = positive('budget', f.budget, 10)
  const available = availableCodecs()
  let codecs: string[] | undefined
  if (f.codecs !== undefined) {
    codecs = String(f.codecs).split(',').map((s) => s.trim()).filter(Boolean)
    const known = [...available, ...shuffledCodecs()]
    const bad = codecs.filter((c) => !known.includes(c))
    if (bad.length || !codecs.length) throw new UsageError(`--codecs: unknown or unavailable ${bad.map((c) => `'${c}'`).join(', ') || '(none given)'}; available here: ${known.join(', ')}`, { flag: '--codecs' })
  }
  let datasets: Dataset[]
  let source: CodecBench['source']
  const dtype = f.dtype === undefined ? undefined : String(f.dtype)
  if (dtype !== undefined && !Object.hasOwn(DTYPES, dtype)) throw new UsageError(`--dtype: ${JSON.stringify(dtype)} is not one of ${Object.keys(DTYPES).join(', ')}`, { flag: '--dtype', value: dtype })
  if (dtype !== undefined && f.file === undefined) throw new UsageError('--dtype describes the values of --file; the synthetic data is float64 and int64 already', { flag: '--dtype' })
  if (f.file !== undefined) {
    const size = dtype === undefined ? 1 : DTYPES[dtype]
    // Whole values per chunk, so every chunk shuffles as the file would.
    const { dataset, fileBytes } = fileDataset(String(f.file), Math.max(size, chunkBytes - (chunkBytes % size)), maxBytes)
    if (dtype !== undefined) Object.assign(dataset, { name: `${dataset.name} (${dtype})`, elementSize: size })
    datasets = [dataset]
    source = { kind: 'file', path: String(f.file), fileBytes, usedBytes: dataset.chunks.reduce((s, c) => s + c.length, 0), chunks: dataset.chunks.length, chunkBytes, dtype }
  } else {
    datasets = await syntheticDatasets(chunkBytes)
    source = { kind: 'synthetic', chunkBytes, datasets: datasets.map((d) => d.name) }
  }
  const json = f.json === true
  const bar = new ProgressBar(datasets.length * benchConfigs(codecs).length, { label: 'bench codecs', unit: 'codec/level runs', enabled: !json })
  let results: CodecResult[]
  try {
    results = await benchCodecs(datasets, { repeat, budgetSeconds, codecs, onConfigDone: () => bar.increment() })
  } finally {
    bar.stop()
  }
  const report: CodecBench = { source, repeat, budgetSeconds, codecsAvailable: [...available, ...shuffledCodecs()], results }
  process.stdout.write((json ? JSON.stringify(report, null, 2) : formatBench(report)) + '\n')
  return 0
}

const SUBCOMMANDS: Record<string, { summary: string; run: (argv: string[]) => Promise<number> }> = {
  codecs: { summary: 'ratio, compress and decompress MB/s of every codec and level, on your file or synthetic data', run: runCodecs },
}

function benchUsage(): string {
  return ['Usage: spillway bench <what> [options]', '', 'What:', ...Object.entries(SUBCOMMANDS).map(([n, s]) => `  ${n}  ${s.summary}`), '', 'Run `spillway bench codecs --help` for its options.'].join('\n')
}

/** `spillway bench <subcommand>`. */
export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '--help' || sub === '-h') {
    ;(sub === undefined ? process.stderr : process.stdout).write(benchUsage() + '\n')
    return sub === undefined ? 2 : 0
  }
  const s = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined
  if (!s) throw new UsageError(`unknown benchmark ${JSON.stringify(sub)}; available: ${Object.keys(SUBCOMMANDS).join(', ')}`)
  return s.run(rest)
}
