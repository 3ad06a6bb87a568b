"""Resident memory of a process, as the spillway sides read it: for the
Python sides of the benchmarks (sys.path gets bench/ first)."""


def rss_of(pid):
    """VmRSS of `pid` in bytes; 0 when it cannot be read (the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0
