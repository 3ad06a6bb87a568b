// The release lane (scripts/test-lane.js release): the release build and what is built from it.
import { laneConfig } from './lanes.mjs'

export default laneConfig('release', { timeout: '15m' })
