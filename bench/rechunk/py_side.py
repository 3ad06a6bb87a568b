#!/usr/bin/env python
"""Dask's side of bench/rechunk, in a fresh process: a LocalCluster of
`--workers` processes, 1 thread and `--mem` bytes each; a random float64
array of n^2 in from^2 chunks persisted (untimed), then
x.rechunk((n, to), method='p2p') persisted (timed). Prints one JSON line."""
import argparse
import json
import sys
import os
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rss import rss_of  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    for k in ("n", "from", "to", "mem", "workers"):
        p.add_argument("--" + k, type=int, required=k != "workers", default=2)
    a = p.parse_args()
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, memory_limit=a.mem, processes=True, dashboard_address=None)
    client = Client(cluster)
    pids = list(client.run(lambda: __import__("os").getpid()).values())
    peak = [0] * len(pids)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for i, pid in enumerate(pids):
                peak[i] = max(peak[i], rss_of(pid))
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()
    x = da.random.default_rng(42).random((a.n, a.n), chunks=(getattr(a, "from"), getattr(a, "from"))).persist()
    wait(x)
    want = float(x.sum().compute())
    t = time.perf_counter()
    y = x.rechunk((a.n, a.to), method="p2p").persist()
    wait(y)
    seconds = time.perf_counter() - t
    got = float(y.sum().compute())
    stop.set()
    print(json.dumps({"side": "dask", "seconds": seconds, "exact": abs(got - want) <= 1e-9 * abs(want), "sum": got, "peakRss": peak}))
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
