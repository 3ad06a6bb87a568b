"""c-blosc2's side of bench/core's shuffle comparison: the same buffers (read
from the files the Node side wrote), the same codec after the same byte
shuffle, one thread, timed call by call. Prints one JSON line.

    python blosc_bench.py MANIFEST.json REPS

MANIFEST: {"datasets": [{"name", "path", "typesize"}], "configs": [{"label",
"codec": "lz4"|"zstd", "clevel"}]}. Blosc's clevel 9 runs LZ4 at its
default acceleration (1), as lz4_flex has; its zstd level is clevel*2-1,
so clevel 1 and 2 are zstd levels 1 and 3."""
import json
import sys
import time

import blosc2
import numpy as np

CODECS = {"lz4": blosc2.Codec.LZ4, "zstd": blosc2.Codec.ZSTD}


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def main():
    manifest = json.load(open(sys.argv[1]))
    reps = int(sys.argv[2])
    blosc2.set_nthreads(1)
    dparams = blosc2.DParams(nthreads=1)
    out = {"blosc2": blosc2.__version__, "clib": blosc2.blosclib_version, "results": []}
    for ds in manifest["datasets"]:
        data = np.fromfile(ds["path"], dtype=np.uint8).tobytes()
        for cfg in manifest["configs"]:
            cparams = blosc2.CParams(
                codec=CODECS[cfg["codec"]], clevel=cfg["clevel"], typesize=ds["typesize"], nthreads=1, filters=[blosc2.Filter.SHUFFLE]
            )
            frame = blosc2.compress2(data, cparams=cparams)
            if blosc2.decompress2(frame, dparams=dparams) != data:
                raise SystemExit(f"blosc2 {cfg['label']} did not round-trip {ds['name']}")
            c, d = [], []
            for _ in range(ds.get("reps", reps)):
                t = time.perf_counter()
                frame = blosc2.compress2(data, cparams=cparams)
                c.append(time.perf_counter() - t)
                t = time.perf_counter()
                blosc2.decompress2(frame, dparams=dparams)
                d.append(time.perf_counter() - t)
            out["results"].append(
                {
                    "data": ds["name"],
                    "config": cfg["label"],
                    "bytes": len(data),
                    "compressed": len(frame),
                    "blocksize": blosc2.get_cbuffer_sizes(frame)[2],
                    "compress": median(c),
                    "decompress": median(d),
                }
            )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
