// The least time the recipe's pressure test could take on a machine with the
// measured rates (bench/limit/rates.js): every byte generated once, the part
// the workers keep resident faulted in once, the rest written through the
// page cache and read back once, every byte summed once. Each rate is the
// machine's aggregate with one process per worker core doing that step at
// once (rates.js run in parallel): on a virtual machine, page faults taken
// on several cores at once do not scale as the cores do. No scheduling, no
// messages, no copies beyond these: an ideal implementation's floor, not a
// fitted curve.
'use strict'

/**
 * @param rates     aggregate bytes/s over the parallel processes: generate, firstTouch, write, read, sum
 * @param test      { bytes, workers, memoryLimit, target }: the array's size and the cluster
 * @param diskShare bytes on disk per spilled byte: 1 for the floor that writes every
 *                  byte as it is; a run's own (after compression) for the floor of the
 *                  bytes it really wrote, its codec's CPU taken as free
 * @returns wall seconds for each step and their sum, the limit
 */
function limitModel(rates, test, diskShare = 1) {
  const { resident, spilled } = split(test)
  const terms = {
    generate: test.bytes / rates.generate,
    firstTouch: resident / rates.firstTouch,
    spillWrite: (spilled * diskShare) / rates.write,
    unspillRead: (spilled * diskShare) / rates.read,
    sum: test.bytes / rates.sum,
  }
  return { resident, spilled, terms, seconds: Object.values(terms).reduce((a, b) => a + b, 0) }
}

/** What the workers can keep in memory (up to their target) and what must go to disk. */
function split(test) {
  const resident = Math.min(test.bytes, test.workers * test.target * test.memoryLimit)
  return { resident, spilled: test.bytes - resident }
}

module.exports = { limitModel, split }
