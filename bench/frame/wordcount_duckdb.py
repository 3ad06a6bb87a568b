# DuckDB's side of the bench/frame word count: the same split, unnest and
# group-by over the same text files; prints one JSON line.
import argparse, json, time

import duckdb

p = argparse.ArgumentParser()
p.add_argument('--dir', required=True)
p.add_argument('--glob', default='*.txt')
p.add_argument('--mem', type=int, required=True)
p.add_argument('--threads', type=int, default=2)
a = p.parse_args()

con = duckdb.connect()
con.execute(f'SET threads = {a.threads}')
con.execute(f"SET memory_limit = '{a.mem // 2**20}MiB'")
t0 = time.perf_counter()
# Each line one VARCHAR: a delimiter, quote and escape the text never holds.
con.execute(
    "CREATE TEMP TABLE r AS SELECT word, count(*) AS n FROM ("
    "  SELECT unnest(regexp_split_to_array(line, '[^A-Za-z0-9_]+')) AS word"
    f"  FROM read_csv('{a.dir}/{a.glob}', columns = {{'line': 'VARCHAR'}}, header = false, delim = '\x01', quote = '', escape = '', auto_detect = false)"
    ") WHERE word <> '' GROUP BY word"
)
seconds = time.perf_counter() - t0
words, total = con.execute('SELECT count(*), sum(n) FROM r').fetchone()
print(json.dumps({'seconds': seconds, 'words': words, 'total': int(total), 'duckdb': duckdb.__version__}))
