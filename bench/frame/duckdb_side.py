# DuckDB's side of bench/frame: the group-by over the same CSV files, threads
# and memory as the spillway side's workers; prints one JSON line.
import argparse, json, time

import duckdb

p = argparse.ArgumentParser()
p.add_argument('--dir', required=True)
p.add_argument('--mem', type=int, required=True)
p.add_argument('--threads', type=int, default=2)
p.add_argument('--case', default='groupby')
p.add_argument('--dim')
a = p.parse_args()

con = duckdb.connect()
con.execute(f'SET threads = {a.threads}')
con.execute(f"SET memory_limit = '{a.mem // 2**20}MiB'")
t0 = time.perf_counter()
# The result materialised in DuckDB (no pyarrow in the venv; a Python list
# of tuples would time the conversion, not the group-by).
src = f"read_csv('{a.dir}/*.csv', header = true)"
if a.case == 'join':
    con.execute(f"CREATE TEMP TABLE r AS SELECT * FROM {src} AS f JOIN read_csv('{a.dim}', header = true) AS d USING (k)")
elif a.case == 'sort':
    con.execute(f"CREATE TEMP TABLE r AS SELECT * FROM {src} ORDER BY k, x DESC NULLS LAST")
else:
    con.execute(f"CREATE TEMP TABLE r AS SELECT cat, k, count(*) AS n, sum(y) AS s, avg(x) AS m, min(x) AS lo, max(y) AS hi FROM {src} GROUP BY cat, k")
seconds = time.perf_counter() - t0
if a.case == 'groupby':
    groups, rows = con.execute('SELECT count(*), sum(n) FROM r').fetchone()
else:
    groups = rows = con.execute('SELECT count(*) FROM r').fetchone()[0]
print(json.dumps({'seconds': seconds, 'groups': groups, 'rows': int(rows), 'duckdb': duckdb.__version__}))
