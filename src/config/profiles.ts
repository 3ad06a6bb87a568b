// Built-in profiles: named option sets setupClient and SetupConfig start
// from, as dask_setup's config_manager.py ships them.

import type { SetupOptions } from './options'

export interface Profile {
  description: string
  options: SetupOptions
}

/**
 * Built-in profiles. `conservative` is the recipe's example for a memory-constrained node;
 * the others carry dask_setup's built-in values (config_manager.py). dask_setup's `production`
 * also sets adaptive=True / min_workers=4: spillway has no adaptive scaling yet, so those are left out.
 */
export const PROFILES: Readonly<Record<string, Readonly<Profile>>> = Object.freeze({
  conservative: {
    description: 'Spill early and keep 4 GiB back: for memory-constrained nodes',
    options: {
      workloadType: 'cpu',
      reserveMemGb: 4,
      memoryTarget: 0.6,
      memorySpill: 0.7,
      memoryPause: 0.85,
      memoryTerminate: 0.95,
      spillCompression: 'auto',
    },
  },
  climate_analysis: {
    description: 'Climate data analysis with large arrays and heavy compute',
    options: { workloadType: 'cpu', reserveMemGb: 60, dashboard: true },
  },
  zarr_io_heavy: {
    description: 'Heavy Zarr I/O with many files',
    options: { workloadType: 'io', reserveMemGb: 40, dashboard: true },
  },
  development: {
    description: 'Lightweight configuration for development and testing',
    options: { workloadType: 'mixed', maxWorkers: 2, reserveMemGb: 8, dashboard: true },
  },
  production: {
    description: 'Robust production configuration with conservative memory usage',
    options: { workloadType: 'mixed', reserveMemGb: 80, dashboard: false, silenceLogs: true },
  },
  interactive: {
    description: 'Interactive notebook-style use',
    options: { workloadType: 'mixed', maxWorkers: 4, reserveMemGb: 20, dashboard: true },
  },
} satisfies Record<string, Profile>)
