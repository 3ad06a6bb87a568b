# bench/frame's Parquet scan: the CSV data written once as Parquet by DuckDB
# (snappy, its default, one file per CSV file) with `--make`; else DuckDB's
# side of the scan: a filter then a group-by over the Parquet files, threads
# and memory as the spillway side's workers. Prints one JSON line.
import argparse, glob, json, os, time

import duckdb

p = argparse.ArgumentParser()
p.add_argument('--dir', required=True)
p.add_argument('--out')
p.add_argument('--make', action='store_true')
p.add_argument('--case', default='parquet-scan')
p.add_argument('--mem', type=int, default=2 << 30)
p.add_argument('--threads', type=int, default=2)
a = p.parse_args()

con = duckdb.connect()
con.execute(f'SET threads = {a.threads}')
con.execute(f"SET memory_limit = '{a.mem // 2**20}MiB'")
if a.make:
    os.makedirs(a.out, exist_ok=True)
    for f in sorted(glob.glob(f'{a.dir}/*.csv')):
        name = os.path.basename(f)[:-4] + '.parquet'
        con.execute(f"COPY (SELECT * FROM read_csv('{f}', header = true)) TO '{a.out}/{name}' (FORMAT parquet, ROW_GROUP_SIZE 131072)")
    print(json.dumps({'files': len(glob.glob(f'{a.out}/*.parquet'))}))
else:
    t0 = time.perf_counter()
    con.execute(
        f"CREATE TEMP TABLE r AS SELECT cat, count(*) AS n, sum(y) AS s FROM read_parquet('{a.dir}/*.parquet') "
        f"WHERE x > 500 GROUP BY cat"
    )
    seconds = time.perf_counter() - t0
    groups, rows = con.execute('SELECT count(*), sum(n) FROM r').fetchone()
    print(json.dumps({'seconds': seconds, 'groups': groups, 'rows': int(rows), 'duckdb': duckdb.__version__}))
