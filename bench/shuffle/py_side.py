#!/usr/bin/env python
"""bench/shuffle's Python sides, one case per invocation, in a fresh process:

  dask-p2p-groupby   dd.read_csv -> df.shuffle('key', shuffle_method='p2p') -> per-partition groupby size
  dask-p2p-join      dd.merge(left, right, on='key', shuffle_method='p2p', broadcast=False) -> len
  dask-bag-groupby   db.read_text -> parse -> Bag.groupby(key) (Dask's default for bags: tasks) -> sizes
  duckdb-groupby     SELECT key, count(*) ... GROUP BY key over read_csv
  duckdb-join        SELECT count(*) FROM left JOIN right USING (key)
  duckdb-wordcount   string_split + unnest, GROUP BY word

Dask: LocalCluster of `--workers` processes, 1 thread each, `--mem` bytes each;
DuckDB: threads = 2, memory_limit = the workers' total. Prints one JSON line.
"""
import argparse
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rss import rss_of  # noqa: E402


def dask_case(a):
    import dask
    import dask.bag as db
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, memory_limit=a.mem, processes=True, dashboard_address=None)
    client = Client(cluster)
    startup = time.perf_counter() - t
    pids = [w["pid"] for w in client.scheduler_info()["workers"].values()] if False else list(client.run(os.getpid).values())
    peak = {p: 0 for p in pids}
    stop = threading.Event()

    def sampler():
        while not stop.is_set():
            for p in pids:
                r = rss_of(p)
                if r and r > peak[p]:
                    peak[p] = r
            stop.wait(0.05)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    left = os.path.join(a.dir, "left", "*.csv")
    right = os.path.join(a.dir, "right", "*.csv")
    bs = a.blocksize
    try:
        t = time.perf_counter()
        if a.case == "dask-p2p-groupby":
            ddf = dd.read_csv(left, blocksize=bs)
            sh = ddf.shuffle("key", shuffle_method="p2p", npartitions=a.npartitions or ddf.npartitions)
            sizes = sh.map_partitions(lambda d: d.groupby("key").size(), meta=("size", "int64"))
            n, tot = dask.compute(sizes.count(), sizes.sum())
            answer = [int(n), int(tot)]
        elif a.case == "dask-p2p-join":
            l = dd.read_csv(left, blocksize=bs)
            r = dd.read_csv(right, blocksize=bs)
            m = l.merge(r, on="key", shuffle_method="p2p", broadcast=False, npartitions=a.npartitions or l.npartitions)
            answer = int(m.map_partitions(len).sum().compute())
        elif a.case == "dask-bag-groupby":
            def parse(line):
                k, v, p = line.rstrip("\n").split(",", 2)
                return (k, int(v), p)

            b = db.read_text(left, blocksize=bs).filter(lambda s: not s.startswith("key,")).map(parse)
            sizes = b.groupby(lambda r: r[0], npartitions=a.npartitions or b.npartitions).map(lambda kv: len(kv[1]))
            n, tot = dask.compute(sizes.count(), sizes.sum())
            answer = [int(n), int(tot)]
        else:
            raise SystemExit(f"unknown case {a.case}")
        seconds = time.perf_counter() - t
    finally:
        stop.set()
        th.join()
        client.close()
        cluster.close()
    return {"seconds": seconds, "startupSeconds": startup, "answer": answer, "peakRss": [peak[p] for p in pids], "versions": {"dask": dask.__version__}}


def duckdb_case(a):
    import duckdb

    tmp = tempfile.mkdtemp(prefix="spillway-bench-duckdb-")
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute(f"SET memory_limit = '{a.mem * a.workers // 2**20}MiB'")
    con.execute(f"SET temp_directory = '{tmp}'")
    con.execute("SET preserve_insertion_order = false")
    left = os.path.join(a.dir, "left", "*.csv")
    right = os.path.join(a.dir, "right", "*.csv")
    text = os.path.join(a.dir, "text", "*.txt")
    csv = "columns = {'key': 'VARCHAR', 'value': 'BIGINT', 'payload': 'VARCHAR'}, header = true, auto_detect = false"
    t = time.perf_counter()
    if a.case == "duckdb-groupby":
        n, tot = con.execute(f"SELECT count(*), sum(c) FROM (SELECT key, count(*) AS c FROM read_csv('{left}', {csv}) GROUP BY key)").fetchone()
        answer = [int(n), int(tot)]
    elif a.case == "duckdb-join":
        rcsv = "columns = {'key': 'VARCHAR', 'attr': 'BIGINT', 'payload': 'VARCHAR'}, header = true, auto_detect = false"
        (answer,) = con.execute(f"SELECT count(*) FROM read_csv('{left}', {csv}) l JOIN read_csv('{right}', {rcsv}) r USING (key)").fetchone()
        answer = int(answer)
    elif a.case == "duckdb-wordcount":
        src = f"read_csv('{text}', columns = {{'line': 'VARCHAR'}}, header = false, auto_detect = false, delim = '\\x01', quote = '', escape = '')"
        n, tot = con.execute(f"SELECT count(*), sum(c) FROM (SELECT w, count(*) AS c FROM (SELECT unnest(string_split(line, ' ')) AS w FROM {src}) GROUP BY w)").fetchone()
        answer = [int(n), int(tot)]
    else:
        raise SystemExit(f"unknown case {a.case}")
    seconds = time.perf_counter() - t
    peak = rss_of(os.getpid())
    con.close()
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return {"seconds": seconds, "startupSeconds": 0, "answer": answer, "peakRss": [peak], "versions": {"duckdb": duckdb.__version__}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--mem", type=int, required=True)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--blocksize", type=int, default=16 << 20)
    p.add_argument("--npartitions", type=int, default=0)
    a = p.parse_args()
    out = duckdb_case(a) if a.case.startswith("duckdb") else dask_case(a)
    out.update({"side": a.case, "case": a.case, "memoryLimit": a.mem, "workers": a.workers})
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
