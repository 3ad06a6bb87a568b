// The dashboard's routes: every one is a read (GET/HEAD) of scheduler state
// or a file shipped in the package. Nothing here changes the cluster.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ownAsset } from '../base/paths'
import { renderMetrics, PROMETHEUS_CONTENT_TYPE } from './metrics'
import type { ClusterView } from './state'
import type { TimelineJSON } from './timeline'

export interface RouteContext {
  view(): ClusterView
  timeline(): TimelineJSON
}

export interface Reply {
  type: string
  body: string | Buffer
  cache?: 'no-store' | 'static'
}

export type Route = (ctx: RouteContext) => Reply

/** `/events` is streamed by the server itself; it is listed so it gets 405s, not 404s. */
export const EVENTS_PATH = '/events'

export const ALLOWED_METHODS = 'GET, HEAD'

const ASSETS_DIR = ownAsset('dashboard/assets')

function uplotFile(name: string): string {
  return join(dirname(require.resolve('uplot/package.json')), 'dist', name)
}

/** Files are read on first use and kept: they never change while the server runs. */
function file(path: () => string, type: string): Route {
  let cached: Buffer | undefined
  return () => {
    cached ??= readFileSync(path())
    return { type, body: cached, cache: 'static' }
  }
}

const json = (data: unknown): Reply => ({ type: 'application/json; charset=utf-8', body: JSON.stringify(data), cache: 'no-store' })

export const ROUTES: Record<string, Route> = {
  '/': file(() => join(ASSETS_DIR, 'index.html'), 'text/html; charset=utf-8'),
  '/index.html': file(() => join(ASSETS_DIR, 'index.html'), 'text/html; charset=utf-8'),
  '/app.js': file(() => join(ASSETS_DIR, 'app.js'), 'text/javascript; charset=utf-8'),
  '/style.css': file(() => join(ASSETS_DIR, 'style.css'), 'text/css; charset=utf-8'),
  '/vendor/uPlot.iife.min.js': file(() => uplotFile('uPlot.iife.min.js'), 'text/javascript; charset=utf-8'),
  '/vendor/uPlot.min.css': file(() => uplotFile('uPlot.min.css'), 'text/css; charset=utf-8'),
  '/api/workers': (ctx) => json(ctx.view()),
  '/api/timeline': (ctx) => json(ctx.timeline()),
  '/metrics': (ctx) => ({ type: PROMETHEUS_CONTENT_TYPE, body: renderMetrics(ctx.view()), cache: 'no-store' }),
}

export function isKnownPath(path: string): boolean {
  return path === EVENTS_PATH || Object.hasOwn(ROUTES, path)
}
