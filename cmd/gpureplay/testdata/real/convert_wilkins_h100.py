#!/usr/bin/env python3
"""Convert an nvidia-smi power trace of 8xH100 Llama-3.1-8B training into a
gpureplay trace.

Source: github.com/grantwilkins/training_profile, h100-traces/ckpt<N>.csv,
written by
  nvidia-smi --query-gpu=timestamp,power.draw,utilization.gpu,memory.used --format=csv -lms ...
while `torchrun --nproc_per_node 8` trained Llama-3.1-8B (HF Trainer, DDP)
saving a checkpoint every N steps.

The source has no index and no UUID column. nvidia-smi prints every GPU, in
index order, at each sampling tick, so line k (0-based, header excluded) is
GPU k mod 8 of tick k // 8; the script checks the line count is a multiple of
8. All 8 rows of a tick get the tick's first timestamp (nvidia-smi stamps each
line; within a tick they differ by milliseconds, rarely up to ~1 s when the
query stalls), so a tick is one batch. Timestamps are local wall-clock time
without a zone; they are read as UTC. uuid = GPU-wilkins-h100-<index>
(synthetic), host = h100x8 (synthetic; one node). The run's name (the
source file's stem) goes in the header comment, not in a column, to keep the
file small.

Usage: python3 convert_wilkins_h100.py SOURCE.csv OUT.csv
No resampling, no slicing: every tick of the source is kept.
"""
import datetime
import os
import sys

NGPU = 8


def num(cell, unit):
    cell = cell.strip()
    if cell.endswith(unit):
        cell = cell[: -len(unit)].strip()
    if cell in ("", "[N/A]", "N/A", "[Not Supported]"):
        return ""
    return f"{float(cell):g}"


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    hdr = [h.strip() for h in lines[0].split(",")]
    want = ["timestamp", "power.draw [W]", "utilization.gpu [%]", "memory.used [MiB]"]
    if hdr != want:
        raise SystemExit(f"{src}: unexpected header {hdr}")
    body = lines[1:]
    if len(body) % NGPU:
        raise SystemExit(f"{src}: {len(body)} lines, not a multiple of {NGPU}")
    last = None
    with open(out, "w", newline="") as f:
        f.write("# nvidia-smi trace of 8xH100 Llama-3.1-8B training, github.com/grantwilkins/training_profile "
                f"{os.path.basename(src)}; no licence in the source repository; see README.md\n")
        f.write("timestamp,uuid,host,gpu,model,DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_FB_USED\n")
        for tick in range(0, len(body), NGPU):
            group = [[c.strip() for c in l.split(",")] for l in body[tick : tick + NGPU]]
            t = datetime.datetime.strptime(group[0][0], "%Y/%m/%d %H:%M:%S.%f")
            ts = t.replace(tzinfo=datetime.timezone.utc).timestamp()
            if last is not None and ts < last:
                raise SystemExit(f"{src}: time goes back at line {tick + 2}")
            last = ts
            for i, c in enumerate(group):
                f.write(f"{ts:.3f},GPU-wilkins-h100-{i},h100x8,{i},NVIDIA H100,"
                        f"{num(c[1], 'W')},{num(c[2], '%')},{num(c[3], 'MiB')}\n")
    print(f"{out}: {len(body)} rows, {len(body) // NGPU} ticks", file=sys.stderr)


if __name__ == "__main__":
    main()
