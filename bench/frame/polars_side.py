# Polars' side of bench/frame: the same group-by over the same CSV files with
# the streaming engine, on POLARS_MAX_THREADS threads (set by run.js to the
# spillway side's worker count); prints one JSON line.
import argparse, json, os, time

p = argparse.ArgumentParser()
p.add_argument('--dir', required=True)
p.add_argument('--case', default='groupby')
p.add_argument('--dim')
a = p.parse_args()

import polars as pl  # after argparse: POLARS_MAX_THREADS is read at import

t0 = time.perf_counter()
lf = pl.scan_parquet(os.path.join(a.dir, '*.parquet')) if a.case == 'parquet-scan' else pl.scan_csv(os.path.join(a.dir, '*.csv'))
if a.case == 'parquet-scan':
    r = lf.filter(pl.col('x') > 500).group_by('cat').agg(n=pl.len(), s=pl.col('y').sum()).collect(engine='streaming')
elif a.case == 'groupby':
    r = (
        lf.group_by('cat', 'k')
        .agg(n=pl.len(), s=pl.col('y').sum(), m=pl.col('x').mean(), lo=pl.col('x').min(), hi=pl.col('y').max())
        .collect(engine='streaming')
    )
elif a.case == 'join':
    r = lf.join(pl.scan_csv(a.dim), on='k').collect(engine='streaming')
elif a.case == 'sort':
    r = lf.sort(['k', 'x'], descending=[False, True], nulls_last=True).collect(engine='streaming')
else:
    raise SystemExit(f'unknown case {a.case}')
seconds = time.perf_counter() - t0
rows = int(r['n'].sum()) if a.case in ('groupby', 'parquet-scan') else r.height
print(json.dumps({'seconds': seconds, 'groups': r.height, 'rows': rows, 'polars': pl.__version__, 'threads': pl.thread_pool_size()}))
