// A frame's graph stays one a client can plan in bounded memory: a shuffle
// links each output to every input, so 5 695 files (a real source tree, one
// partition each) shuffled into as many outputs were 32 M links, and the
// client ran out of heap while it built them. Built here, no cluster.
import test from 'ava'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { count, frame } from 'spillway'
import { MAX_SHUFFLE_LINKS } from '../src/frame/shuffle'

const dir = mkdtempSync(join(tmpdir(), 'spillway-frame-graph-'))
test.after.always(() => rmSync(dir, { recursive: true, force: true }))
const FILES = 5_695
mkdirSync(join(dir, 'src'))
for (let i = 0; i < FILES; i++) writeFileSync(join(dir, 'src', `f${i}.c`), `int f${i}(void) { return ${i}; }\n`)

// A blocksize under two files' bytes keeps one file a partition (readText packs smaller files together up to it).
const ONE_FILE_EACH = { blocksize: 40 }

test('a shuffled groupBy over 5 695 one-file partitions builds with as many outputs as a client can plan, its heap bounded', (t) => {
  const lines = frame.readText(join(dir, 'src', '*.c'), ONE_FILE_EACH)
  t.is(lines.npartitions, FILES)
  const before = process.memoryUsage().heapUsed
  const counts = lines.groupBy('line').agg({ n: count() }, { method: 'shuffle' })
  t.is(counts.npartitions, Math.floor(MAX_SHUFFLE_LINKS / FILES))
  t.true(counts.taskCount() > FILES)
  const grown = process.memoryUsage().heapUsed - before
  t.true(grown < 512 * 2 ** 20, `the graph took ${(grown / 2 ** 20).toFixed(0)} MiB of heap`)
})

test('a shuffle asked for more links than a client can plan is ERR_SPILLWAY_GRAPH_TOO_LARGE when it is built, saying how many outputs fit', (t) => {
  const lines = frame.readText(join(dir, 'src', '*.c'), ONE_FILE_EACH)
  const fit = Math.floor(MAX_SHUFFLE_LINKS / FILES)
  for (const build of [() => lines.groupBy('line').agg({ n: count() }, { method: 'shuffle', splitOut: FILES }), () => lines.shuffle('line', { npartitions: FILES }), () => lines.join(lines, { on: 'line', broadcastBytes: 0 })]) {
    const e = t.throws(build, { code: 'ERR_SPILLWAY_GRAPH_TOO_LARGE' })
    t.regex(e!.message, /[\d,]+ links, past the 2,000,000 a client can plan/)
    t.regex(e!.message, /Ask for at most [\d,]+ outputs \(npartitions, splitOut\)/)
  }
  t.is(lines.groupBy('line').agg({ n: count() }, { method: 'shuffle', splitOut: fit }).npartitions, fit)
})

test('readText packs small files into partitions up to blocksize, every file once, in order', (t) => {
  const all = frame.readText(join(dir, 'src', '*.c'))
  t.is(all.npartitions, 1, '5 695 files of about 30 bytes: one partition at the default 64 MiB')
  const packed = frame.readText(join(dir, 'src', '*.c'), { blocksize: 300 })
  t.true(packed.npartitions > FILES / 10 - 1 && packed.npartitions < FILES / 9 + 1, `${packed.npartitions} partitions of 9 or 10 files`)
  const sources = packed.parts.map((p) => p.source as { path: string; more?: { path: string }[] })
  const order = sources.flatMap((s) => [s.path, ...(s.more ?? []).map((m) => m.path)])
  t.deepEqual(order, [...order].sort(), 'every file once, in the glob\'s order')
  t.is(order.length, FILES)
})
