#!/usr/bin/env python3
"""Convert a W&B system-metrics power export of OLMo training into a
gpureplay trace.

Source: github.com/jacob-morrison/olmo-co2,
environmental-impact-paper/dataframes/amberish-power.csv, written by the
same repository's olmo-family-co2-analysis-amberish.py: for every W&B run of
the group "amberish7" (OLMo 7B, project ai2-llm/olmo-medium) it reads
run.history(stream="events") and keeps `_timestamp` and
`system.gpu.<i>.powerWatts` for i = 0..7 (the 8 GPUs of the node that ran the
W&B process), appending run after run. Columns: "",timestamp,GPU 0..GPU 7.

A "segment" is a maximal stretch of rows whose timestamps do not go back,
i.e. one W&B run (segments are numbered from 0 in file order). This script
keeps ONE segment (default 22: 37.3 h, 4,313 samples; the longest, 23, makes a 6.4 MB file) so every
series is one run on one node; timestamps and values are copied as they are
(no resampling; W&B logs a ~30 s average every ~30 s).
uuid = GPU-olmo-amberish7-s<segment>-<i>, host = amberish7-s<segment> (both
synthetic: the export has neither GPU UUID nor host), model NVIDIA H100 (the
repository's note for this group says CoreWeave; 700 W peaks), job amberish7.
Power only: the export has no utilization or memory.

Usage: python3 convert_olmo_wandb.py amberish-power.csv OUT.csv [SEGMENT]
"""
import csv
import sys


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    want = int(sys.argv[3]) if len(sys.argv) == 4 else 22
    with open(src, newline="") as f:
        rd = csv.reader(f)
        hdr = next(rd)
        gcols = [(k, int(h.split()[1])) for k, h in enumerate(hdr) if h.startswith("GPU ")]
        tcol = hdr.index("timestamp")
        rows = list(rd)
    seg, last, kept = 0, None, []
    for r in rows:
        t = float(r[tcol])
        if last is not None and t < last:
            seg += 1
        last = t
        if seg == want:
            kept.append(r)
    if not kept:
        raise SystemExit(f"{src}: no segment {want} (last is {seg})")
    n = 0
    with open(out, "w", newline="") as f:
        f.write("# W&B system.gpu.<i>.powerWatts of OLMo 7B 'amberish7' training (one W&B run, 8 GPUs), "
                f"github.com/jacob-morrison/olmo-co2 amberish-power.csv segment {want}; "
                "no licence in the source repository; see README.md\n")
        f.write("timestamp,uuid,host,gpu,model,job,DCGM_FI_DEV_POWER_USAGE\n")
        for r in kept:
            for k, i in gcols:
                v = r[k].strip()
                f.write(f"{r[tcol]},GPU-olmo-amberish7-s{want}-{i},amberish7-s{want},{i},NVIDIA H100,amberish7,"
                        f"{'' if v == '' else format(float(v), 'g')}\n")
                n += 1
    print(f"{out}: {n} rows, {len(kept)} samples, segment {want}", file=sys.stderr)


if __name__ == "__main__":
    main()
