const { writeFileSync, mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { setupClient, frame, col, count, sum, mean, max } = require('spillway')

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tables-'))
  writeFileSync(join(dir, 'a.csv'), 'city,year,amount\nOslo,2023,12.5\n"Paris, TX",2023,NA\nOslo,2024,30\n')
  writeFileSync(join(dir, 'b.csv'), 'city,year,amount\r\nLima,2024,7\r\nOslo,2024,2.5\r\n')
  const { client, cluster } = await setupClient({ maxWorkers: 2, dashboard: false, silenceLogs: true })
  try {
    const sales = frame.readCsv(join(dir, '*.csv'), { nullValues: ['', 'NA'] })
    console.log(sales.schema) // { city: 'utf8', year: 'int64', amount: 'float64' }
    const byCity = sales
      .filter(col('year').gtEq(2023).and(col('amount').isNotNull()))
      .groupBy('city')
      .agg({ n: count(), total: sum('amount'), avg: mean('amount'), last: max('year') })
    const table = await client.compute(byCity)
    for (const row of table) console.log(row.toJSON()) // int64 columns read as bigints
  } finally {
    await client.close()
    await cluster.close()
    rmSync(dir, { recursive: true })
  }
}
main()
