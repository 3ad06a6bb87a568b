const { writeFileSync, mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { setupClient, frame, col, count, sum, mean, max } = require('spillway')

// Where the Parquet result goes (read it back in DuckDB or Polars afterwards).
const out = resolve(process.argv[2] ?? 'by-country')

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tables-'))
  writeFileSync(join(dir, 'sales-a.csv'), 'city,year,amount\nOslo,2023,12.5\n"Paris, TX",2023,NA\nOslo,2024,30\n')
  writeFileSync(join(dir, 'sales-b.csv'), 'city,year,amount\r\nLima,2024,7\r\nOslo,2024,2.5\r\nCusco,2024,4\r\n')
  writeFileSync(join(dir, 'cities.csv'), 'city,country\nOslo,Norway\nLima,Peru\nCusco,Peru\n"Paris, TX",USA\n')
  const { client, cluster } = await setupClient({ maxWorkers: 2, dashboard: false, silenceLogs: true })
  try {
    const sales = frame.readCsv(join(dir, 'sales-*.csv'), { nullValues: ['', 'NA'] })
    console.log(sales.schema) // { city: 'utf8', year: 'int64', amount: 'float64' }
    const cities = frame.readCsv(join(dir, 'cities.csv'), { schema: { city: 'utf8', country: 'utf8' } })
    const byCountry = sales
      .filter(col('year').gtEq(2023).and(col('amount').isNotNull()))
      .join(cities, { on: 'city' })
      .groupBy('country')
      .agg({ n: count(), total: sum('amount'), avg: mean('amount'), last: max('year') })
      .sortBy('total', { descending: true })
    const table = await client.compute(byCountry)
    for (const row of table) console.log(row.toJSON()) // int64 columns read as bigints
    const files = await client.compute(byCountry.toParquet(join(out, 'part-*.parquet')))
    const back = await client.compute(frame.readParquet(files).sortBy('total', { descending: true }))
    console.log(`${files.length} Parquet file(s), ${back.numRows} rows read back`)
  } finally {
    await client.close()
    await cluster.close()
    rmSync(dir, { recursive: true })
  }
}
main()
