// The recipe's plot as a standalone SVG: in-memory and spilled GiB over time.

import type { TimelinePoint } from './monitor'

export interface ChartOptions {
  width?: number
  height?: number
  title?: string
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)

function ticks(max: number, n = 5): number[] {
  const step = max / n
  return Array.from({ length: n + 1 }, (_, i) => i * step)
}

export function timelineChart(timeline: TimelinePoint[], options: ChartOptions = {}): string {
  const W = options.width ?? 800
  const H = options.height ?? 320
  const m = { l: 60, r: 20, t: 36, b: 44 }
  const pw = W - m.l - m.r
  const ph = H - m.t - m.b
  const tMax = Math.max(1e-9, ...timeline.map((p) => p.t))
  const yMax = Math.max(0.01, ...timeline.map((p) => Math.max(p.memoryGib, p.spillGib))) * 1.1
  const x = (t: number) => m.l + (t / tMax) * pw
  const y = (v: number) => m.t + ph - (v / yMax) * ph
  const line = (get: (p: TimelinePoint) => number) => timeline.map((p) => `${x(p.t).toFixed(1)},${y(get(p)).toFixed(1)}`).join(' ')
  const grid = ticks(yMax)
    .map((v) => `<line x1="${m.l}" x2="${m.l + pw}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#000" stroke-opacity="0.1"/><text x="${m.l - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v.toFixed(2)}</text>`)
    .join('')
  const xt = ticks(tMax)
    .map((t) => `<text x="${x(t).toFixed(1)}" y="${m.t + ph + 16}" text-anchor="middle">${t.toFixed(1)}</text>`)
    .join('')
  const title = esc(options.title ?? 'Memory and spill during the pressure test')
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${title}</text>
<g>${grid}${xt}</g>
<line x1="${m.l}" y1="${m.t + ph}" x2="${m.l + pw}" y2="${m.t + ph}" stroke="#333"/>
<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${m.t + ph}" stroke="#333"/>
<text x="${m.l + pw / 2}" y="${H - 8}" text-anchor="middle">Time (s)</text>
<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">GiB</text>
<polyline class="series memory" data-series="memory" fill="none" stroke="#1f77b4" stroke-width="2" points="${line((p) => p.memoryGib)}"/>
<polyline class="series spill" data-series="spill" fill="none" stroke="#ff7f0e" stroke-width="2" points="${line((p) => p.spillGib)}"/>
<g transform="translate(${m.l + 12} ${m.t + 8})">
<rect width="170" height="40" fill="#fff" stroke="#ccc"/>
<line x1="8" y1="13" x2="28" y2="13" stroke="#1f77b4" stroke-width="2"/><text x="34" y="17">In memory (GiB)</text>
<line x1="8" y1="30" x2="28" y2="30" stroke="#ff7f0e" stroke-width="2"/><text x="34" y="34">Spilled to disk (GiB)</text>
</g>
</svg>
`
}
