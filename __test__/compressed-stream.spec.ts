// Compressed text streamed through a bag's steps: a .zst and a .gz whose
// content is larger than a worker's whole memory limit are counted and
// their words tallied exactly, every worker under its limit; kept whole,
// the same file fails by name. And frames read compressed CSV and NDJSON.
import test from 'ava'
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createGzip, gzipSync } from 'node:zlib'
import { bag, Client, frame, LocalCluster } from 'spillway'
import { peakRss } from './cluster-helpers'

const MIB = 2 ** 20
/** The smallest workers that start with room for their work: 256 MiB each (setupClient keeps every worker at 1 GiB or more). */
const LIMIT = 256 * MIB
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike']
const PADS = ['the quick brown fox jumps over the lazy dog', 'pack my box with five dozen liquor jugs', 'how vexingly quick daft zebras jump']

let client: Client
let lc: LocalCluster
let dir: string
let spillDir: string

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'spillway-zstream-'))
  spillDir = mkdtempSync(join(tmpdir(), 'spillway-zstream-spill-'))
  lc = await LocalCluster.start({ nWorkers: 2, threadsPerWorker: 1, memoryLimit: LIMIT, thresholds: { target: 0.6, spill: 0.7, pause: 0.85, terminate: 0.95 }, spillDir })
  client = new Client(lc, { silenceLogs: true })
})

test.after.always(async () => {
  await client?.close()
  await lc?.close()
  rmSync(dir, { recursive: true, force: true })
  rmSync(spillDir, { recursive: true, force: true })
})

/** Lines that differ (a counter, words and pads picked by different strides) yet compress well; `words` tallies the second field. */
function* chunks(bytes: number, words: Map<string, number>): Generator<{ text: string; lines: number }> {
  let i = 0
  let written = 0
  while (written < bytes) {
    const lines: string[] = []
    for (let k = 0; k < 50_000; k++, i++) {
      const w = WORDS[(i * 7919) % WORDS.length]
      words.set(w, (words.get(w) ?? 0) + 1)
      lines.push(`${i} ${w} ${WORDS[(i * 31) % 11]} ${PADS[(i * 17) % 3]} ${i % 977}`)
    }
    const text = lines.join('\n') + '\n'
    written += Buffer.byteLength(text)
    yield { text, lines: lines.length }
  }
}

/** A .zst (one frame per chunk, as `zstd` writes concatenated files) and a .gz (one stream) of the same content past `bytes`. */
async function writeBoth(bytes: number): Promise<{ zst: string; gz: string; lines: number; words: Map<string, number>; content: number }> {
  const { compressFile } = await import('../src/native/file-codecs')
  const zst = join(dir, 'big.txt.zst')
  const gz = join(dir, 'big.txt.gz')
  const words = new Map<string, number>()
  const zout = createWriteStream(zst)
  const gzip = createGzip({ level: 1 })
  const gout = gzip.pipe(createWriteStream(gz))
  let lines = 0
  let content = 0
  for (const c of chunks(bytes, words)) {
    const b = Buffer.from(c.text)
    lines += c.lines
    content += b.length
    if (!zout.write(await compressFile(b, 'zstd'))) await once(zout, 'drain')
    if (!gzip.write(b)) await once(gzip, 'drain')
  }
  zout.end()
  gzip.end()
  await Promise.all([once(zout, 'close'), once(gout, 'close')])
  return { zst, gz, lines, words, content }
}

test.serial('a .zst and a .gz whose content is larger than a worker\'s memory are counted and tallied through a bag exactly, every worker under its limit; kept whole, the file fails by name', async (t) => {
  t.timeout(600_000)
  const { zst, gz, lines, words, content } = await writeBoth(LIMIT + 32 * MIB)
  t.true(content > LIMIT, `content ${content} bytes past the ${LIMIT}-byte limit`)
  const lines2 = bag.readText([zst, gz])
  t.is(lines2.npartitions, 2, 'one partition a file')
  const restarts = () => lc.nannies.reduce((n, x) => n + x.restarts, 0)
  const { value: count, peak } = await peakRss(client, () => client.compute(lines2.count()))
  t.is(count, 2 * lines)
  const { value: freq, peak: peak2 } = await peakRss(client, () => client.compute(lines2.map((l: string) => l.slice(l.indexOf(' ') + 1, l.indexOf(' ', l.indexOf(' ') + 1))).frequencies()))
  t.deepEqual(new Map(freq as [string, number][]), new Map([...words].map(([w, n]) => [w, 2 * n])))
  t.log(`content ${(content / MIB).toFixed(0)} MiB a file, ${lines} lines; peak rss ${[...peak, ...peak2].map(([n, r]) => `${n} ${(r / MIB).toFixed(0)} MiB`).join(', ')} of ${LIMIT / MIB} MiB`)
  for (const [name, rss] of [...peak, ...peak2]) t.true(rss > 0 && rss < LIMIT, `${name}: peak rss ${(rss / MIB).toFixed(0)} MiB of ${LIMIT / MIB}`)
  t.is(restarts(), 0, 'no worker lost')

  // The items kept whole (compute of the lines themselves) cannot fit: refused by name as the file streams, no worker lost.
  const err = await t.throwsAsync(client.compute(bag.readText(zst)))
  t.is((err as any).code, 'ERR_SPILLWAY_TOO_LARGE', String(err))
  t.regex(err!.message, new RegExp(`file ${zst.replace(/[.*]/g, '\\$&')} \\(zstd\\) is streamed a block at a time, but this task keeps its items whole .*: \\d+ items from its first \\d+ decompressed bytes already take about \\d+ MiB \\(the worker's process \\d+ MiB\\), past what this worker's 256 MiB limit allows \\(40% for the items, 80% for the process\\): reduce them \\(count, frequencies, foldBy, reduction\\), write them \\(toTextfiles\\)`))
  t.is(restarts(), 0, 'no worker lost')
  // A filter that keeps few lines is kept whole, exact.
  t.deepEqual(await client.compute(bag.readText(gz).filter((l: string) => l.startsWith('4242 ')).map((l: string) => l.split(' ')[1])), [WORDS[(4242 * 7919) % WORDS.length]])
})

test.serial('corrupt or truncated compressed text fails naming the file; lz4 frames, CRLF and a last line without a newline stream as whole files do', async (t) => {
  const { compressFile } = await import('../src/native/file-codecs')
  const text = Array.from({ length: 30_000 }, (_, i) => `row ${i}\r`).join('\n') + '\nlast'
  const lz4 = join(dir, 'crlf.txt.lz4')
  writeFileSync(lz4, Buffer.concat([await compressFile(Buffer.from(text.slice(0, 1000)), 'lz4'), await compressFile(Buffer.from(text.slice(1000)), 'lz4')]))
  t.deepEqual(await client.compute(bag.readText(lz4)), text.split('\n'))
  t.deepEqual(await client.compute(bag.readText(lz4, { lineDelimiter: '\r\n' }).count()), 30_001)
  // Pulled by a step that takes them whole, and pushed through an async step drained block by block: the same lines.
  t.deepEqual(await client.compute(bag.readText(lz4).mapPartitions((lines: Iterable<string>) => [[...lines].length])), [30_001])
  t.is(await client.compute(bag.readText(lz4).filter(async (l: string) => l.endsWith('7\r')).count()), 3000)
  const whole = gzipSync(text)
  const cut = join(dir, 'cut.txt.gz')
  writeFileSync(cut, whole.subarray(0, whole.length - 200))
  const err = await t.throwsAsync(client.compute(bag.readText(cut).count()), { code: 'ERR_SPILLWAY_READ' })
  t.regex(err!.message, new RegExp(`file ${cut.replace(/[.*]/g, '\\$&')} is not valid gzip after byte \\d+ of its decompressed content`))
  const empty = join(dir, 'empty.txt.zst')
  writeFileSync(empty, await compressFile(Buffer.alloc(0), 'zstd'))
  t.is(await client.compute(bag.readText(empty).count()), 0)
})

test.serial('frames read compressed CSV and NDJSON (gzip, zstd, lz4) whole, one partition a file, exactly', async (t) => {
  const { compressFile } = await import('../src/native/file-codecs')
  const n = 50_000
  const csv = '\uFEFFid,shop,amount\n' + Array.from({ length: n }, (_, i) => `${i},${WORDS[i % 5]},${(i % 100) / 4}`).join('\n') + '\n'
  const ndjson = Array.from({ length: n }, (_, i) => JSON.stringify({ id: i, shop: WORDS[i % 5], tags: [i % 3] })).join('\n')
  const files = {
    csvGz: [join(dir, 'sales.csv.gz'), gzipSync(csv)],
    csvZst: [join(dir, 'sales.csv.zst'), await compressFile(Buffer.from(csv), 'zstd')],
    ndLz4: [join(dir, 'sales.ndjson.lz4'), await compressFile(Buffer.from(ndjson), 'lz4')],
    ndGz: [join(dir, 'sales.ndjson.gz'), gzipSync(ndjson)],
  } as const
  for (const [p, b] of Object.values(files)) writeFileSync(p, b)
  const amount = Array.from({ length: n }, (_, i) => (i % 100) / 4).reduce((a, b) => a + b, 0)
  const f = frame.readCsv([files.csvGz[0], files.csvZst[0]], { blocksize: 1000 })
  t.is(f.npartitions, 2, 'a compressed file is not cut at its blocksize')
  const table = await client.compute(f)
  t.deepEqual(table.schema.fields.map((x: any) => x.name), ['id', 'shop', 'amount'])
  t.is(table.numRows, 2 * n)
  let sum = 0
  for (const v of table.getChild('amount')!) sum += v as number
  t.is(sum, 2 * amount)
  const nd = await client.compute(frame.readNdjson([files.ndLz4[0], files.ndGz[0]]))
  t.is(nd.numRows, 2 * n)
  let ids = 0
  for (const v of nd.getChild('id')!) ids += Number(v)
  t.is(ids, n * (n - 1))
  t.is(String(nd.get(n + 7)!.shop), WORDS[7 % 5])
  const bad = join(dir, 'bad.csv.zst')
  writeFileSync(bad, 'id\n1\n')
  t.throws(() => frame.readCsv(bad), { code: 'ERR_SPILLWAY_READ', message: /bad\.csv\.zst: not valid zstd/ })
})
