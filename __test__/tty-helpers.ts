import { Writable } from 'node:stream'

/** A stream that says it is a terminal (or not) and keeps what is written: what progress bars draw on. */
export function fakeTty(isTTY = true) {
  const chunks: string[] = []
  const s = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk))
      cb()
    },
  }) as Writable & { isTTY: boolean; columns: number; text(): string }
  s.isTTY = isTTY
  s.columns = 160
  s.text = () => chunks.join('')
  return s
}
