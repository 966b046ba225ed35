#!/usr/bin/env python3
"""Convert Alibaba's GenTD26 pod GPU series into a gpureplay trace.

Source: github.com/alibaba/clusterdata, cluster-trace-v2026-GenAI/
  pod_gpu_duty_cycle_anon.tar.gz        (value = GPU utilization, percent)
  pod_gpu_memory_used_bytes_anon.tar.gz (value = GPU memory used, bytes)
Each holds one CSV with columns value,timestamp_anon,container_ip (in some
order); container_ip is an MD5 hash and the only identity, so one pod is one
series here.

Usage:
  python3 convert_alibaba_gentd26.py DUTY.tar.gz|csv MEMORY.tar.gz|csv OUT.csv [NPODS]

Slice: the whole recording (22.8 h at the source's 57 s step, not resampled),
for the first NPODS pods (default 48) in ascending order of their MD5 hash,
i.e. an arbitrary but reproducible sample of the 144 pods.
Conversion: uuid = GPU-gentd26-<first 12 hex of the hash> (synthetic: the
source has no GPU UUID), pod = the same 12 hex; utilization rounded to 3
decimals, memory converted from bytes to MiB (2 decimals). A pod with only
one of the two metrics at a timestamp gets a blank cell for the other.
"""
import csv
import io
import sys
import tarfile


def rows(path):
    if path.endswith(".tar.gz") or path.endswith(".tgz"):
        with tarfile.open(path, "r:gz") as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name.endswith(".csv"):
                    data = tf.extractfile(m).read().decode("utf-8-sig")
                    yield from csv.DictReader(io.StringIO(data))
                    return
        raise SystemExit(f"{path}: no CSV inside")
    with open(path, encoding="utf-8-sig", newline="") as f:
        yield from csv.DictReader(f)


def load(path):
    out = {}
    for r in rows(path):
        v = r["value"].strip()
        if v in ("", "NULL", "None"):
            continue
        out[(float(r["timestamp_anon"]), r["container_ip"].strip())] = float(v)
    return out


def main():
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__)
    duty, mem, out = sys.argv[1], sys.argv[2], sys.argv[3]
    npods = int(sys.argv[4]) if len(sys.argv) == 5 else 48
    util = load(duty)
    used = load(mem)
    pods = sorted({p for _, p in util} | {p for _, p in used})[:npods]
    keep = set(pods)
    keys = sorted((t, p) for (t, p) in set(util) | set(used) if p in keep)
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        f.write("# Alibaba GenTD26 (github.com/alibaba/clusterdata, cluster-trace-v2026-GenAI), CC BY 4.0;"
                " anonymised at the source (timestamps shifted, values scaled); see README.md\n")
        w.writerow(["timestamp", "uuid", "pod", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"])
        for t, p in keys:
            u = util.get((t, p))
            m = used.get((t, p))
            w.writerow([
                f"{t:.0f}" if t == int(t) else repr(t),
                f"GPU-gentd26-{p[:12]}",
                p[:12],
                "" if u is None else f"{round(u, 3):g}",
                "" if m is None else f"{round(m / 1048576, 2):g}",
            ])
    print(f"{out}: {len(keys)} rows, {len(pods)} pods", file=sys.stderr)


if __name__ == "__main__":
    main()
