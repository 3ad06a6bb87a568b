"""The Python sides of bench/bag, one case per invocation, in a fresh process
(and, for Dask, a fresh LocalCluster: 2 worker processes, 1 thread and
1 GiB each, no dashboard, as bench/dask). Start-up (imports, cluster or
connection) is timed apart from the workload. Prints one JSON line.

  python py_side.py --side dask --case text --manifest M [--blocksize 64MiB]
      small files: db.read_text(small, files_per_partition=F), large files:
      db.read_text(large, blocksize=B), concatenated (Dask cannot mix the
      two in one read_text); .filter(lambda l: 'ERROR' in l).count()
  python py_side.py --side dask --case ndjson --manifest M
      db.read_text(file, blocksize=B).map(json.loads)
        .foldby('user', acc + e['bytes'], 0, a + b, 0)
  python py_side.py --side dask --case files --list L [--blocksize 64MiB]
      db.read_text(paths, files_per_partition=F) (F: blocksize / mean size)
        .map(lambda l: bool(re.search(r'\bstatic\b', l))).frequencies()
      paths from L (JSON [{path, bytes}]): fsspec's glob has no {c,h}
  python py_side.py --side duckdb --case ndjson --manifest M
      threads=2, memory_limit='2GiB' (the two workers' memory);
      SELECT "user", sum(bytes) FROM read_json(file, format='newline_delimited') GROUP BY ALL
"""

import argparse
import json
import time

t0 = time.perf_counter()


def parse_bytes(s):
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B)?\s*", s)
    units = {None: 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
    return int(float(m.group(1)) * units[m.group(2)])


def tree_cpu_seconds(root=None):
    """CPU seconds (user + system) of this process and every process under it, from /proc (Linux), else None."""
    import os

    if not os.path.isdir("/proc"):
        return None
    root = root or os.getpid()
    ticks, children = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = open(f"/proc/{name}/stat").read()
        except OSError:
            continue
        f = stat[stat.rindex(")") + 2 :].split(" ")
        ticks[int(name)] = int(f[11]) + int(f[12])
        children.setdefault(int(f[1]), []).append(int(name))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += ticks.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--side", required=True, choices=["dask", "duckdb"])
    p.add_argument("--case", required=True, choices=["text", "ndjson", "files"])
    p.add_argument("--manifest")
    p.add_argument("--list")
    p.add_argument("--blocksize", default="64MiB")
    a = p.parse_args()
    m = json.load(open(a.manifest)) if a.manifest else {}
    blocksize = parse_bytes(a.blocksize)
    out = {"side": a.side, "case": a.case}
    if a.side == "dask":
        import dask
        import dask.bag as db
        from distributed import Client, LocalCluster

        dask.config.set({"distributed.worker.daemon": False})
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB", processes=True, dashboard_address=None)
        client = Client(cluster)
        startup = time.perf_counter() - t0
        t = time.perf_counter()
        cpu0 = tree_cpu_seconds()
        if a.case == "files":
            import re

            files = json.load(open(a.list))
            per = max(1, int(blocksize // (sum(f["bytes"] for f in files) / max(1, len(files)))))
            lines = db.read_text([f["path"] for f in files], files_per_partition=per)
            out["npartitions"] = lines.npartitions
            pattern = re.compile(r"\bstatic\b")
            freq = dict(lines.map(lambda l: bool(pattern.search(l))).frequencies().compute())
            out["answer"] = {"lines": freq.get(True, 0) + freq.get(False, 0), "matches": freq.get(True, 0)}
        elif a.case == "text":
            avg = m["text"]["smallBytes"] / max(1, m["text"]["smallFiles"])
            per = max(1, int(blocksize // avg))
            small = db.read_text(m["text"]["smallGlob"], files_per_partition=per)
            large = db.read_text(m["text"]["largeGlob"], blocksize=blocksize)
            lines = db.concat([small, large])
            out["npartitions"] = lines.npartitions
            out["answer"] = lines.filter(lambda l: "ERROR" in l).count().compute()
        else:
            events = db.read_text(m["ndjson"]["path"], blocksize=blocksize).map(json.loads)
            out["npartitions"] = events.npartitions
            by_user = events.foldby(lambda e: e["user"], lambda acc, e: acc + e["bytes"], 0, lambda x, y: x + y, 0).compute()
            out["answer"] = {"users": len(by_user), "total": sum(v for _, v in by_user)}
        out["seconds"] = time.perf_counter() - t
        out["cpuSeconds"] = None if cpu0 is None else tree_cpu_seconds() - cpu0
        out["startupSeconds"] = startup
        client.close()
        cluster.close()
    else:
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads = 2")
        con.execute("SET memory_limit = '2GiB'")
        startup = time.perf_counter() - t0
        t = time.perf_counter()
        rows = con.execute(
            "SELECT \"user\", sum(bytes) FROM read_json(?, format = 'newline_delimited') GROUP BY ALL",
            [m["ndjson"]["path"]],
        ).fetchall()
        out["seconds"] = time.perf_counter() - t
        out["startupSeconds"] = startup
        out["answer"] = {"users": len(rows), "total": int(sum(v for _, v in rows))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
