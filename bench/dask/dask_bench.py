"""Dask's side of bench/dask: the recipe's workloads on distributed.LocalCluster
with dask_setup's pressure settings reproduced directly (dask_setup itself is
not on PyPI): 2 worker processes, 1 thread each, 1 GiB limit each,
target/spill/pause/terminate 0.75/0.85/0.92/0.98, spill compression per case,
no dashboard, no comm compression.

One case per invocation, on a fresh cluster (as the recipe makes one cluster
per codec); cluster start-up is timed separately from the workload. Prints
one JSON line on stdout.

  python dask_bench.py --case random|randint|tasks [--codec lz4] [--n 20000]
                       [--chunk 2000] [--ntasks 10000] [--interval 0.2]

Workloads (the timed region is persist + wait + reduction, as the recipe's):
  random   da.random.random((n, n), chunks=chunk).persist(); wait; .mean()
  randint  da.random.randint(0, 10, (n, n), chunks=chunk).persist(); wait; .sum()
  tasks    da.random.random(ntasks, chunks=1).persist(); wait; .sum(): ntasks
           tiny generation tasks plus the per-chunk reduction, which is what
           spillway's side runs (it has no client.map yet).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict

import dask
import dask.array as da
import distributed
import numpy as np
from distributed import Client, LocalCluster, wait

GIB = 2**30


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True, choices=["random", "randint", "tasks", "submit", "map", "pipeline"])
    p.add_argument("--slices", type=int, default=48)
    p.add_argument("--records", type=int, default=4_194_304)
    p.add_argument("--codec", default="auto")
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--chunk", type=int, default=2_000)
    p.add_argument("--ntasks", type=int, default=10_000)
    p.add_argument("--interval", type=float, default=0.2)
    return p.parse_args()


def scheduler_snapshot(dask_scheduler):
    """Per-worker figures from the scheduler's heartbeat metrics (ws.metrics)."""
    out = {}
    for addr, ws in dask_scheduler.workers.items():
        m = ws.metrics
        sb = m.get("spilled_bytes", {}) or {}
        out[addr] = {
            "managed": m.get("managed_bytes", 0),
            "spilled_memory": sb.get("memory", 0),
            "spilled_disk": sb.get("disk", 0),
            "rss": m.get("memory", 0),
        }
    return out


def scheduler_timings(dask_scheduler):
    """Dask's fine performance metrics, summed over workers and task prefixes:
    seconds by (context, activity), e.g. execute/thread-cpu, execute/disk-write,
    memory-monitor/disk-write."""
    sec = defaultdict(float)
    counts = defaultdict(float)
    for key, v in dask_scheduler.cumulative_worker_metrics.items():
        if not isinstance(key, tuple) or len(key) < 3:
            continue
        context, activity, unit = key[0], key[-2], key[-1]
        if unit == "seconds":
            sec[f"{context}/{activity}"] += v
        elif unit in ("count", "bytes"):
            counts[f"{context}/{activity}/{unit}"] += v
    return {"seconds": dict(sec), "totals": dict(counts)}


def totals(snap):
    mem = sum(max(0, w["managed"] - w["spilled_memory"]) for w in snap.values())
    disk = sum(w["spilled_disk"] for w in snap.values())
    rss = sum(w["rss"] for w in snap.values())
    return mem, disk, rss


class Monitor:
    """The recipe's monitor: samples the scheduler every `interval` seconds."""

    def __init__(self, client, interval):
        self.client = client
        self.interval = interval
        self.samples = []
        self.done = threading.Event()
        self.start = time.perf_counter()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self):
        snap = self.client.run_on_scheduler(scheduler_snapshot)
        mem, disk, rss = totals(snap)
        self.samples.append({"t": time.perf_counter() - self.start, "memory": mem, "spill": disk, "rss": rss})

    def run(self):
        while not self.done.is_set():
            try:
                self.sample()
            except Exception:  # the cluster may be closing
                pass
            self.done.wait(self.interval)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def inc(i):
    return i + 1


# (e): examples/user-pipeline.ts's work with numpy functions.
def read_slice(item):
    records = item["records"]
    x = np.random.default_rng(item["slice"] + 1).integers(0, 2**32, records, dtype=np.uint32)
    # The slice's bytes as a file holds them: 16-byte records.
    raw = np.empty(records, dtype=[("reading", "<f8"), ("sensor", "<u4"), ("flags", "<u4")])
    raw["reading"] = 20 + (x % 2000) / 100
    raw["sensor"] = x & 63
    raw["flags"] = 0
    out = np.empty(records * 2)
    out[:records] = raw["reading"]
    out[records:] = raw["sensor"]
    return out


def stats(cols):
    v = cols[: len(cols) // 2]
    return {"n": len(v), "sum": float(v.sum()), "sumsq": float(np.dot(v, v)), "min": float(v.min()), "max": float(v.max())}


def combine_stats(all_stats):
    n = sum(s["n"] for s in all_stats)
    mean = sum(s["sum"] for s in all_stats) / n
    sumsq = sum(s["sumsq"] for s in all_stats)
    return {"n": n, "mean": mean, "std": (sumsq / n - mean * mean) ** 0.5, "min": min(s["min"] for s in all_stats), "max": max(s["max"] for s in all_stats)}


def abs_deviation(cols, mean):
    v = cols[: len(cols) // 2]
    return {"n": len(v), "s": float(np.abs(v - mean).sum())}


def mean_abs_deviation(parts):
    return sum(p["s"] for p in parts) / sum(p["n"] for p in parts)


def exceedances(cols, limit):
    n = len(cols) // 2
    v = cols[:n]
    return np.bincount(cols[n:][v > limit].astype(np.int64), minlength=64).astype(np.float64)


def add_counts(*parts):
    return np.sum(parts, axis=0)


def pipeline(client, args):
    t0 = time.perf_counter()
    slices = client.map(read_slice, [{"slice": s, "records": args.records} for s in range(args.slices)])
    wait(slices)
    t1 = time.perf_counter()
    summary = client.submit(combine_stats, client.map(stats, slices)).result()
    mad = client.submit(mean_abs_deviation, [client.submit(abs_deviation, s, summary["mean"]) for s in slices]).result()
    counts = client.submit(add_counts, *[client.submit(exceedances, s, 39.5) for s in slices]).result()
    assert mad > 0 and len(counts) == 64
    return {"persistSeconds": t1 - t0, "reduceSeconds": time.perf_counter() - t1}, summary["n"], slices


def workload(case, args, client=None):
    """Returns (phases, answer, the persisted array: still held)."""
    if case == "pipeline":
        return pipeline(client, args)
    t0 = time.perf_counter()
    if case in ("submit", "map"):
        # (d): ntasks tiny tasks through client.submit one call each (or one client.map), then gathered.
        if case == "submit":
            fs = [client.submit(inc, i, pure=False) for i in range(args.ntasks)]
        else:
            fs = client.map(inc, range(args.ntasks), pure=False)
        t1 = time.perf_counter()
        answer = sum(client.gather(fs))
        return {"persistSeconds": t1 - t0, "reduceSeconds": time.perf_counter() - t1}, answer, fs
    if case == "random":
        x = da.random.random((args.n, args.n), chunks=(args.chunk, args.chunk)).persist()
    elif case == "randint":
        x = da.random.randint(0, 10, size=(args.n, args.n), chunks=(args.chunk, args.chunk)).persist()
    else:
        x = da.random.random(args.ntasks, chunks=1).persist()
    wait(x)
    t1 = time.perf_counter()
    if case == "random":
        answer = float(x.mean().compute())
    elif case == "randint":
        answer = int(x.sum().compute())
    else:
        answer = float(x.sum().compute())
    t2 = time.perf_counter()
    return {"persistSeconds": t1 - t0, "reduceSeconds": t2 - t1}, answer, x


def main():
    args = parse_args()
    codec = None if args.codec in ("none", "None", "false") else args.codec
    base = os.environ.get("TMPDIR") or tempfile.gettempdir()
    spill_dir = tempfile.mkdtemp(prefix="dask-bench-", dir=base)
    dask.config.set(
        {
            "distributed.worker.memory.target": 0.75,
            "distributed.worker.memory.spill": 0.85,
            "distributed.worker.memory.pause": 0.92,
            "distributed.worker.memory.terminate": 0.98,
            "distributed.worker.memory.spill-compression": codec,
            "distributed.comm.compression": False,
            "logging.distributed": "error",
        }
    )
    try:
        t = time.perf_counter()
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=GIB,
            dashboard_address=None,
            local_directory=spill_dir,
            silence_logs=40,
        )
        client = Client(cluster)
        client.wait_for_workers(2)
        startup = time.perf_counter() - t
        with Monitor(client, args.interval) as mon:
            t = time.perf_counter()
            phases, answer, x = workload(args.case, args, client)
            seconds = time.perf_counter() - t
        # Heartbeats arrive every 0.5 s: wait for more so the final figure
        # describes the state after the workload, with the array still held
        # (outside the timed region).
        time.sleep(1.2)
        final = client.run_on_scheduler(scheduler_snapshot)
        timings = client.run_on_scheduler(scheduler_timings)
        mon.sample()
        mem, disk, rss = totals(final)
        del x
        out = {
            "side": "dask",
            "case": args.case,
            "codec": args.codec,
            "n": args.n,
            "chunk": args.chunk,
            "ntasks": args.ntasks,
            "seconds": seconds,
            **phases,
            "startupSeconds": startup,
            "answer": answer,
            "peakMemoryBytes": max(s["memory"] for s in mon.samples),
            "peakSpillBytes": max(s["spill"] for s in mon.samples),
            "peakRssBytes": max(s["rss"] for s in mon.samples),
            "finalMemoryBytes": mem,
            "spilledBytes": disk,
            "spilledMemoryBytes": sum(w["spilled_memory"] for w in final.values()),
            "samples": len(mon.samples),
            "workers": len(final),
            "timings": timings,
            "versions": {
                "python": sys.version.split()[0],
                "dask": dask.__version__,
                "distributed": distributed.__version__,
                "numpy": np.__version__,
            },
        }
        client.close()
        cluster.close()
    finally:
        shutil.rmtree(spill_dir, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
