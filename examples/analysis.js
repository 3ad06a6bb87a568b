// Tables end to end: orders in CSV and customers in NDJSON, read, filtered,
// grouped, joined, sorted, written as Parquet and read back. It writes its
// input into data/ and its output into report/: run it in an empty folder.
const { mkdirSync, writeFileSync } = require('node:fs')
const { setupClient, frame, col, count, sum, max } = require('spillway')

const names = ['ada', 'grace', 'edsger', 'barbara']
mkdirSync('data', { recursive: true })
for (let f = 0; f < 3; f++) {
  let csv = 'order,customer,amount\n'
  for (let n = f * 1000; n < (f + 1) * 1000; n++) csv += `${n},${names[(n * n + (n >> 4)) % 4]},${(n * 37) % 101 / 4}\n`
  writeFileSync(`data/orders-${f}.csv`, csv)
}
const countries = ['NO', 'US', 'NL', 'US']
writeFileSync('data/customers.ndjson', names.map((customer, i) => JSON.stringify({ customer, country: countries[i] }) + '\n').join(''))

async function main() {
  const { client, cluster } = await setupClient({ maxWorkers: 2, dashboard: false, silenceLogs: true })
  try {
    const orders = frame.readCsv('data/orders-*.csv') // 3 files, 3 partitions
    const customers = frame.readNdjson('data/customers.ndjson')
    const report = orders
      .filter(col('amount').gtEq(10))
      .groupBy('customer')
      .agg({ orders: count(), total: sum('amount'), biggest: max('amount') })
      .join(customers, { on: 'customer' })
      .sortBy('total', { descending: true })
    await client.compute(report.toParquet('report/part-*.parquet'))
    const back = await client.compute(frame.readParquet('report/*.parquet'))
    for (const r of back) console.log(r.customer, r.country, Number(r.orders), r.total, r.biggest)
  } finally {
    await client.close()
    await cluster.close()
  }
}
main()
