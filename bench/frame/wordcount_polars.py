# Polars' side of the bench/frame word count: the same words (every run of
# [A-Za-z0-9_], which is what splitting on the complement and dropping ''
# leaves), exploded and grouped, with the streaming engine on
# POLARS_MAX_THREADS threads; prints one JSON line.
import argparse, json, os, time

p = argparse.ArgumentParser()
p.add_argument('--dir', required=True)
a = p.parse_args()

import polars as pl  # after argparse: POLARS_MAX_THREADS is read at import

t0 = time.perf_counter()
# Each line one string: a separator and quote the text never holds.
lines = pl.scan_csv(os.path.join(a.dir, '*.txt'), has_header=False, separator='\x01', quote_char=None, new_columns=['line'], schema_overrides={'line': pl.String})
r = (
    lines.select(pl.col('line').str.extract_all(r'[A-Za-z0-9_]+').alias('word'))
    .explode('word')
    .filter(pl.col('word').is_not_null())
    .group_by('word')
    .agg(n=pl.len())
    .collect(engine='streaming')
)
seconds = time.perf_counter() - t0
print(json.dumps({'seconds': seconds, 'words': r.height, 'total': int(r['n'].sum()), 'polars': pl.__version__, 'threads': pl.thread_pool_size()}))
