// The dashboard page: renders /api/workers and /api/timeline, then follows
// /events (Server-Sent Events), falling back to polling where that fails.
/* global uPlot */
'use strict'
;(function () {
  const GiB = 2 ** 30
  const MiB = 2 ** 20
  const MARKS = ['target', 'spill', 'pause', 'terminate']

  function fmtBytes(b) {
    if (!Number.isFinite(b)) return '–'
    if (b >= GiB) return (b / GiB).toFixed(2) + ' GiB'
    if (b >= MiB) return (b / MiB).toFixed(1) + ' MiB'
    if (b >= 1024) return (b / 1024).toFixed(0) + ' KiB'
    return b + ' B'
  }
  // An off threshold (target or spill false) has no fraction.
  const pct = (v) => (v === false ? 'off' : Math.round(v * 100) + '%')
  const clamp = (v) => Math.max(0, Math.min(100, v))

  function el(tag, cls, text) {
    const e = document.createElement(tag)
    if (cls) e.className = cls
    if (text !== undefined) e.textContent = text
    return e
  }
  const $ = (id) => document.getElementById(id)

  // ---- worker rows -------------------------------------------------------

  const rows = new Map()

  function rowKey(w) {
    return w.slot !== null ? 'slot-' + w.slot : 'addr-' + w.address
  }

  function buildRow() {
    const root = el('div', 'worker')
    const name = el('div', 'w-name')
    const title = el('span', 'title')
    const addr = el('span', 'addr')
    const badge = el('span', 'badge')
    name.append(title, addr, badge)

    const bars = el('div', 'bars')
    const memRow = el('div', 'bar-row mem')
    const memBar = el('div', 'bar')
    const managed = el('div', 'seg managed')
    const unmanaged = el('div', 'seg unmanaged')
    memBar.append(managed, unmanaged)
    const marks = {}
    for (const m of MARKS) {
      const mk = el('div', 'mark ' + m)
      mk.append(el('span', '', m))
      marks[m] = mk
      memBar.append(mk)
    }
    memRow.append(el('span', '', 'memory'), memBar)
    const spillRow = el('div', 'bar-row')
    const spillBar = el('div', 'bar thin')
    const spilled = el('div', 'seg spilled')
    spillBar.append(spilled)
    spillRow.append(el('span', '', 'on disk'), spillBar)
    bars.append(memRow, spillRow)

    const figs = el('div', 'figs')
    const fig = {}
    for (const [k, label] of [
      ['memory', 'in memory'],
      ['spilled', 'spilled'],
      ['rss', 'RSS'],
      ['limit', 'limit'],
      ['chunks', 'tasks'],
      ['transfer', 'transfer in/out'],
      ['shuffle', 'shuffle in/out'],
      ['restarts', 'restarts'],
    ]) {
      const s = el('span', '', label + ' ')
      const b = el('b', '', '–')
      s.append(b)
      fig[k] = b
      figs.append(s)
    }
    root.append(name, bars, figs)
    return { root, title, addr, badge, managed, unmanaged, marks, spilled, memBar, fig }
  }

  function renderWorkers(view) {
    const box = $('workers')
    const seen = new Set()
    let spillScale = 0
    for (const w of view.workers) spillScale = Math.max(spillScale, w.memoryLimit, w.spilledBytes.disk)
    for (const w of view.workers) {
      const key = rowKey(w)
      seen.add(key)
      let r = rows.get(key)
      if (!r) {
        r = buildRow()
        rows.set(key, r)
        box.append(r.root)
      }
      const d = r.root.dataset
      d.slot = w.slot === null ? '' : String(w.slot)
      d.address = w.address || ''
      d.status = w.status
      d.stuck = w.stuck ? w.stuck.reason : ''
      d.memoryBytes = String(w.inMemoryBytes)
      d.spilledBytes = String(w.spilledBytes.disk)
      d.rssBytes = String(w.rss)
      d.memoryLimit = String(w.memoryLimit)
      r.title.textContent = w.slot !== null ? 'worker ' + w.slot : w.name || w.address
      r.addr.textContent = w.address ? (w.host ? w.host + ' · ' : '') + w.address : w.status === 'restarting' ? 'starting a new worker…' : ''
      // A stuck worker says why: the work it holds up fails with that reason.
      r.badge.textContent = w.stuck ? w.status + ' · ' + w.stuck.reason.replace(/-/g, ' ') : w.status
      r.badge.className = 'badge status-' + (w.stuck ? 'stuck' : w.status)
      r.badge.title = w.stuck
        ? 'stuck since ' + new Date(w.stuck.since).toLocaleTimeString() + ': ' + (w.stuck.lastWriteError || w.stuck.reason) + '; ' +
          (w.stuck.freeBytes === undefined ? '' : fmtBytes(w.stuck.freeBytes) + ' free in ' + w.stuck.spillDir + ', ') +
          fmtBytes(w.stuck.waitingBytes) + ' waiting to be written'
        : ''
      const lim = w.memoryLimit || 1
      const m = clamp((w.inMemoryBytes / lim) * 100)
      r.managed.style.width = m + '%'
      r.unmanaged.style.left = m + '%'
      r.unmanaged.style.width = Math.min(100 - m, clamp((w.unmanagedBytes / lim) * 100)) + '%'
      for (const k of MARKS) {
        const off = w.thresholds[k] === false
        r.marks[k].style.display = off ? 'none' : ''
        if (off) continue
        r.marks[k].style.left = clamp(w.thresholds[k] * 100) + '%'
        r.marks[k].title = k + ' ' + pct(w.thresholds[k]) + ' = ' + fmtBytes(w.marks[k])
      }
      r.memBar.title = fmtBytes(w.inMemoryBytes) + ' managed in memory, ' + fmtBytes(w.unmanagedBytes) + ' unmanaged, of ' + fmtBytes(w.memoryLimit)
      r.spilled.style.width = clamp((w.spilledBytes.disk / (spillScale || 1)) * 100) + '%'
      r.fig.memory.textContent = fmtBytes(w.inMemoryBytes)
      r.fig.spilled.textContent =
        fmtBytes(w.spilledBytes.disk) + (w.spilledBytes.memory ? ' (' + fmtBytes(w.spilledBytes.memory) + ' in memory, ' + w.spillCount + ' spills)' : '')
      r.fig.rss.textContent = fmtBytes(w.rss)
      r.fig.limit.textContent = fmtBytes(w.memoryLimit)
      r.fig.chunks.textContent = w.tasks.held + ' held, ' + w.tasks.processing + ' running'
      r.fig.transfer.textContent = fmtBytes(w.transfer.incomingBytes) + ' / ' + fmtBytes(w.transfer.outgoingBytes)
      r.fig.transfer.title = w.transfer.incomingCount + ' values fetched from other workers, ' + w.transfer.outgoingCount + ' sent'
      r.fig.shuffle.textContent = fmtBytes(w.shuffle.receivedBytes) + ' / ' + fmtBytes(w.shuffle.sentBytes)
      r.fig.shuffle.title = w.shuffle.heldShards + ' shards held now (in memory or spilled), waiting for their outputs'
      r.fig.restarts.textContent = String(w.restarts)
    }
    for (const [key, r] of rows) {
      if (!seen.has(key)) {
        r.root.remove()
        rows.delete(key)
      }
    }
    if (!view.workers.length && !box.querySelector('.empty')) box.append(el('div', 'empty', 'no workers'))
    else if (view.workers.length) box.querySelector('.empty')?.remove()
  }

  // ---- summary and tasks -------------------------------------------------

  function renderSummary(view) {
    $('host').textContent = view.host
    $('s-workers').textContent = String(view.totals.workers)
    $('s-memory').textContent = fmtBytes(view.totals.memoryBytes) + ' (peak ' + fmtBytes(view.peakMemoryBytes) + ')'
    $('s-spill').textContent = fmtBytes(view.totals.spillBytes) + ' (peak ' + fmtBytes(view.peakSpillBytes) + ')'
    $('s-limit').textContent = fmtBytes(view.totals.memoryLimit)
    $('s-codec').textContent = view.codec === view.codecResolved ? view.codec : view.codec + ' (' + view.codecResolved + ')'
    const t = view.thresholds
    $('s-thresholds').textContent = MARKS.map((k) => pct(t[k])).join(' / ')
    $('s-thresholds').title = MARKS.join(' / ')
    $('s-spilldir').textContent = view.spillDir
  }

  function stack(counts, total) {
    const s = el('div', 'stack')
    for (const k of ['memory', 'processing', 'queued', 'erred']) {
      const d = el('div', k)
      d.style.width = (total ? (counts[k] / total) * 100 : 0) + '%'
      d.title = counts[k] + ' ' + k
      s.append(d)
    }
    return s
  }

  function renderTasks(view) {
    const box = $('tasks')
    const t = view.tasks
    const b = t.byState
    const total = b.queued + b.processing + b.memory + b.erred
    const frag = document.createDocumentFragment()
    const head = el(
      'div',
      'total',
      total + ' tasks tracked (' + t.submitted + ' submitted): ' + b.memory + ' in memory, ' + b.processing + ' processing, ' + b.queued + ' queued, ' + b.erred + ' erred',
    )
    head.dataset.memory = String(b.memory)
    frag.append(head)
    if (!t.groups.length) frag.append(el('div', 'empty', 'no tasks yet'))
    for (const g of t.groups) {
      const row = el('div', 'group')
      row.append(el('div', 'gname', g.name), stack(g, g.total), el('div', '', g.memory + ' / ' + g.total + ' in memory' + (g.erred ? ', ' + g.erred + ' erred' : '')))
      frag.append(row)
    }
    box.replaceChildren(frag)
  }

  function renderShuffles(view) {
    const frag = document.createDocumentFragment()
    const list = view.shuffles || []
    if (!list.length) frag.append(el('div', 'empty', 'no shuffle in flight'))
    for (const s of list) {
      const row = el('div', 'group')
      row.dataset.shuffle = s.id
      const phase = s.barrier ? 'barrier passed, outputs reading their shards' : 'inputs splitting and sending shards'
      row.append(
        el('div', 'gname', (s.label || 'shuffle') + ' ' + s.id.slice(0, 8)),
        el('div', '', s.inputs.done + ' / ' + s.inputs.total + ' inputs sent, ' + s.outputs.done + ' / ' + s.outputs.total + ' outputs held: ' + phase),
      )
      frag.append(row)
    }
    $('shuffles').replaceChildren(frag)
  }

  // ---- timeline chart ----------------------------------------------------

  const data = [[], [], [], []]
  let lastTime = 0
  let chart
  let limitBytes = 0

  function addSample(s) {
    if (!s || s.time <= lastTime) return false
    lastTime = s.time
    data[0].push(s.time / 1000)
    data[1].push(s.memoryBytes / GiB)
    data[2].push(s.spillBytes / GiB)
    data[3].push(limitBytes / GiB)
    // Keep the page's copy as bounded as the server's ring buffer.
    if (data[0].length > 3600) for (const a of data) a.shift()
    return true
  }

  function chartWidth() {
    return Math.max(320, $('chart').clientWidth)
  }

  function makeChart() {
    const gib = (u, v) => (v == null ? '–' : v.toFixed(2) + ' GiB')
    chart = new uPlot(
      {
        width: chartWidth(),
        height: 280,
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(0.1, max * 1.1)] } },
        series: [
          {},
          { label: 'In memory', stroke: '#1f77b4', width: 2, fill: 'rgba(31,119,180,0.08)', value: gib },
          { label: 'Spilled to disk', stroke: '#ff7f0e', width: 2, value: gib },
          { label: 'Memory limit (all workers)', stroke: '#9ca3af', width: 1, dash: [6, 4], value: gib },
        ],
        axes: [
          // Whole seconds and up: sub-second ticks only add noise at a 500 ms sampling.
          { incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600], values: (u, vals) => vals.map((v) => new Date(v * 1000).toLocaleTimeString()) },
          { label: 'GiB', values: (u, vals) => vals.map((v) => v.toFixed(2)) },
        ],
      },
      data,
      $('chart'),
    )
    window.addEventListener('resize', () => chart.setSize({ width: chartWidth(), height: 280 }))
  }

  // ---- live updates ------------------------------------------------------

  function render(view) {
    limitBytes = view.totals.memoryLimit
    renderSummary(view)
    renderWorkers(view)
    renderTasks(view)
    renderShuffles(view)
    document.body.dataset.updatedAt = String(view.time)
  }

  function setConn(state, text) {
    const c = $('conn')
    c.dataset.state = state
    c.textContent = text
  }

  async function getJSON(path) {
    const r = await fetch(path, { cache: 'no-store' })
    if (!r.ok) throw new Error(path + ': HTTP ' + r.status)
    return r.json()
  }

  let pollTimer
  function poll() {
    if (pollTimer) return
    setConn('polling', 'polling')
    pollTimer = setInterval(async () => {
      try {
        const [view, tl] = await Promise.all([getJSON('/api/workers'), getJSON('/api/timeline')])
        render(view)
        let added = false
        for (const s of tl.points) added = addSample(s) || added
        if (added) chart.setData(data)
        setConn('polling', 'polling · ' + new Date(view.time).toLocaleTimeString())
      } catch (e) {
        setConn('lost', 'dashboard unreachable')
      }
    }, 1000)
  }

  function follow() {
    if (typeof EventSource === 'undefined') return poll()
    const es = new EventSource('/events')
    let failures = 0
    es.addEventListener('update', (e) => {
      failures = 0
      const msg = JSON.parse(e.data)
      render(msg.view)
      if (addSample(msg.sample)) chart.setData(data)
      setConn('live', 'live · ' + new Date(msg.view.time).toLocaleTimeString())
    })
    es.onerror = () => {
      // EventSource retries by itself; after a few failures in a row, poll instead.
      if (++failures >= 3) {
        es.close()
        poll()
      } else setConn('connecting', 'reconnecting…')
    }
  }

  async function start() {
    try {
      const [view, tl] = await Promise.all([getJSON('/api/workers'), getJSON('/api/timeline')])
      limitBytes = view.totals.memoryLimit
      for (const s of tl.points) addSample(s)
      makeChart()
      render(view)
    } catch (e) {
      setConn('lost', 'dashboard unreachable')
      if (!chart) makeChart()
    }
    follow()
  }

  start()
})()
