# bench/frame/smallfiles.js's data: `--files` small Parquet files of
# `--rows` rows each (cat: 20 strings, k, x: a double in [0, 1000), y: an
# int), written by pyarrow (snappy, its default; one row group a file).
import argparse, json, os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

p = argparse.ArgumentParser()
p.add_argument('--out', required=True)
p.add_argument('--files', type=int, default=2000)
p.add_argument('--rows', type=int, default=2000)
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
rng = np.random.default_rng(7)
cats = np.array([f'cat-{i}' for i in range(20)])
for f in range(a.files):
    n = a.rows
    t = pa.table({
        'cat': pa.array(cats[rng.integers(0, 20, n)]),
        'k': pa.array(rng.integers(0, 50000, n)),
        'x': pa.array(rng.random(n) * 1000),
        'y': pa.array(rng.integers(0, 100, n)),
    })
    pq.write_table(t, f'{a.out}/part-{f:05d}.parquet')
print(json.dumps({'files': a.files, 'rows': a.files * a.rows}))
