// setupClient's part of the dashboard: start it as the config asks, log
// where it is (never on stdout), and tie its life to the cluster's.

import type { Client } from '../client/client'
import type { SetupConfig } from '../config/config'
import { ConfigError, SpillwayError } from '../base/errors'
import { dashboardBanner, startDashboard, type Dashboard } from './server'
import type { Logger } from '../base/logger'

type DashboardConfig = Pick<SetupConfig, 'dashboardPort' | 'dashboardAddress'>

export async function startDashboardFor(client: Client, config: DashboardConfig, logger: Logger = client.logger): Promise<Dashboard> {
  const address = config.dashboardAddress
  let dashboard: Dashboard
  try {
    try {
      dashboard = await startDashboard(client, { port: config.dashboardPort, address })
    } catch (e) {
      // As Dask does: a taken port is not worth failing the cluster for.
      if (!(e instanceof SpillwayError && e.details.errno === 'EADDRINUSE' && config.dashboardPort !== 0)) throw e
      logger.warn(`dashboard port ${config.dashboardPort} is in use; using a free port instead`)
      dashboard = await startDashboard(client, { port: 0, address })
    }
  } catch (e) {
    await client.cluster.close()
    const errno = e instanceof SpillwayError ? e.details.errno : undefined
    throw new ConfigError(
      [{ field: 'dashboardAddress', value: address, allowed: `an address of this machine to listen on (listening failed: ${errno ?? (e as Error).message}); or dashboard: false` }],
      'dashboard',
      { cause: e },
    )
  }
  client.cluster.onClose(() => dashboard.close())
  client.dashboardLink = dashboard.url
  logger.info(dashboardBanner(dashboard.url, dashboard.port, address))
  return dashboard
}
