# Dask DataFrame's side of bench/frame: the same group-by (join, sort, or
# Parquet scan) over the same files on a LocalCluster of --workers single-threaded workers of --mem
# bytes each, the shuffle by P2P; start-up timed apart; prints one JSON line.
import argparse, json, os, time

p = argparse.ArgumentParser()
p.add_argument('--dir', required=True)
p.add_argument('--mem', type=int, required=True)
p.add_argument('--workers', type=int, default=2)
p.add_argument('--blocksize', type=int, default=32 << 20)
p.add_argument('--case', default='groupby')
p.add_argument('--dim')
a = p.parse_args()

import dask
import dask.dataframe as dd
from distributed import Client, LocalCluster

if __name__ == '__main__':
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, memory_limit=a.mem, processes=True, dashboard_address=None)
    client = Client(cluster)
    startup = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        with dask.config.set({'dataframe.shuffle.method': 'p2p'}):
            if a.case == 'parquet-scan':
                df = dd.read_parquet(os.path.join(a.dir, '*.parquet'), columns=['cat', 'x', 'y'])
            else:
                df = dd.read_csv(os.path.join(a.dir, '*.csv'), blocksize=a.blocksize, dtype={'cat': 'string', 'k': 'int64', 'x': 'float64', 'y': 'float64'})
            if a.case == 'parquet-scan':
                r = df[df.x > 500].groupby('cat').agg(n=('x', 'size'), s=('y', 'sum')).compute()
            elif a.case == 'groupby':
                r = df.groupby(['cat', 'k']).agg(n=('k', 'size'), s=('y', 'sum'), m=('x', 'mean'), lo=('x', 'min'), hi=('y', 'max'), split_out=a.workers).compute()
            elif a.case == 'join':
                dim = dd.read_csv(a.dim, dtype={'k': 'int64', 'label': 'string'})
                r = df.merge(dim, on='k', how='inner', shuffle_method='p2p').compute()
            elif a.case == 'sort':
                r = df.sort_values(['k', 'x'], ascending=[True, False]).compute()
            else:
                raise SystemExit(f'unknown case {a.case}')
        seconds = time.perf_counter() - t1
        rows = int(r['n'].sum()) if a.case in ('groupby', 'parquet-scan') else len(r)
        print(json.dumps({'seconds': seconds, 'startup': startup, 'groups': len(r), 'rows': rows, 'dask': dask.__version__}))
    finally:
        client.close()
        cluster.close()
