#!/usr/bin/env python3
"""Writes the two labelled traces of the issue on the counters fleets collect.

default-counters-15s: 4 H100s scraped every 15 s, with exactly the fields of
dcgm-exporter's default counters (no SM activity, occupancy, NVLink bytes,
clock event reasons or ECC counts); each GPU runs 5 minutes in each of four
states, the GPUs in turn: compute bound (GPU utilization 98 %, graphics
engine 0.92, tensor 0.6, 620 W), memory bound (DRAM active 0.85), input
bound (graphics engine 0.30, PCIe receive 6 GB/s) and idle.

allreduce-internode-5s: an all-reduce across two nodes, twice: 8 H100s on 2
nodes (job llm-h100) and 8 L40S on 2 nodes (job llm-l40s), every 5 s, with
every field. Each job computes for 5 minutes, then spends 5 minutes in the
collective (utilization 100 %, SM activity 0.12, PCIe 11 GB/s each way, the
GPUDirect RDMA traffic to the NIC; NVLink 20 GB/s on the H100s, none on the
L40S), then computes again.

Deterministic (seeded). Run from this folder: python3 gen.py
"""
import random

rng = random.Random(34)
T0 = 1767225600


def noisy(x, rel=0.03):
    return x * (1 + rng.uniform(-rel, rel))


DEFAULT_COLS = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP",
                "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_USED",
                "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
                "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"]

# state: util, gr, tensor, dram, power W, pcie tx, pcie rx, clock, temp, memcopy
STATES = {
    "compute_bound": (98, 0.92, 0.60, 0.35, 620, 0.6e9, 1.2e9, 1950, 68, 28),
    "memory_bound": (99, 0.93, 0.14, 0.85, 550, 0.3e9, 0.6e9, 1950, 65, 82),
    "input_bound": (35, 0.30, 0.12, 0.10, 290, 0.4e9, 6.0e9, 1950, 53, 12),
    "idle": (0, 0.0, 0.0, 0.0, 72, 1e6, 2e6, 990, 34, 0),
}
ORDER = ["compute_bound", "memory_bound", "input_bound", "idle"]


def default_counters():
    rows, labels = [], []
    uuids = ["GPU-0d5a6e10-34a1-4c1e-9d2b-%012x" % (0x5eed00 + i) for i in range(4)]
    span = 300
    for i, u in enumerate(uuids):
        for k in range(4):
            st = ORDER[(i + k) % 4]
            labels.append((u, "bottleneck", st, T0 + k * span, T0 + (k + 1) * span))
    for t in range(0, 4 * span, 15):
        for i, u in enumerate(uuids):
            st = ORDER[(i + t // span) % 4]
            util, gr, ten, dram, pw, tx, rx, clk, temp, mc = STATES[st]
            fb = 30000 if st != "idle" else 1
            # In DEFAULT_COLS' order.
            rows.append([T0 + t, "gpu-node-0", i, u, "NVIDIA H100 80GB HBM3", "ml", "worker-%d" % i, "main", "",
                         round(noisy(clk, 0.005)), 2619, round(noisy(temp, 0.02)), round(noisy(temp + 4, 0.02)),
                         round(noisy(pw), 3), min(100, round(noisy(util, 0.02))) if util else 0,
                         round(noisy(mc)) if mc else 0, fb, 81559 - fb, 0, 0,
                         round(min(1, noisy(gr)), 4), round(min(1, noisy(ten)), 4), round(min(1, noisy(dram)), 4),
                         round(noisy(tx, 0.1)), round(noisy(rx, 0.1))])
    head = ["timestamp", "host", "gpu", "uuid", "model", "namespace", "pod", "container", "job"] + DEFAULT_COLS
    write("default-counters-15s", head, rows, labels,
          "# dcgm-exporter's default counters on 4 H100s, 15 s scrapes: compute, memory, input bound and idle, 5 minutes each (gen.py)")


FULL_COLS = ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
             "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
             "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
             "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
             "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES",
             "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES"]

# model: board W, compute W, collective W, clock MHz, fb MiB, nvlink during compute, during the collective
MODELS = {
    "NVIDIA H100 80GB HBM3": (700, 615, 260, 1950, 81559, 22e9, 20e9),
    "NVIDIA L40S": (350, 300, 125, 2490, 46068, None, None),
}


def allreduce():
    rows, labels = [], []
    span, end = 300, 900
    jobs = [("llm-h100", "NVIDIA H100 80GB HBM3", "h100-node-"), ("llm-l40s", "NVIDIA L40S", "l40s-node-")]
    gpus = []
    for j, (job, model, prefix) in enumerate(jobs):
        for n in range(2):
            for g in range(4):
                u = "GPU-a11e0d00-%04x-4b00-8000-%012x" % (j, n * 4 + g)
                gpus.append((u, job, model, prefix + str(n), g, n * 4 + g))
                labels.append((u, "bottleneck", "compute_bound", T0, T0 + span))
                labels.append((u, "bottleneck", "communication_bound", T0 + span, T0 + 2 * span))
                labels.append((u, "bottleneck", "compute_bound", T0 + 2 * span, T0 + end))
    nv = {}
    for t in range(0, end, 5):
        coll = span <= t < 2 * span
        for u, job, model, host, g, rank in gpus:
            board, cw, aw, clk, fbt, nvc, nva = MODELS[model]
            if coll:
                util, sm, occ, ten, dram, pw, tx, rx, nvl, gr = 100, 0.12, 0.05, 0.02, 0.08, aw, 11e9, 11e9, nva, 0.97
            else:
                util, sm, occ, ten, dram, pw, tx, rx, nvl, gr = 98, 0.86, 0.45, 0.55, 0.34, cw, 0.6e9, 1.2e9, nvc, 0.92
            fb = 60000 if fbt > 60000 else 40000
            row = [T0 + t, host, g, u, model, "ml", "%s-worker-%d" % (job, rank), "trainer", job,
                   min(100, round(noisy(util, 0.02))), fb, fbt - fb, round(noisy(pw), 3), round(noisy(62, 0.03)),
                   round(noisy(clk, 0.005)), 0, 0, 0, round(min(1, noisy(gr)), 4), round(min(1, noisy(sm)), 4),
                   round(min(1, noisy(occ)), 4), round(min(1, noisy(ten)), 4), round(min(1, noisy(dram)), 4),
                   round(noisy(tx, 0.08)), round(noisy(rx, 0.08))]
            if nvl is None:
                row += ["", ""]
            else:
                row += [round(noisy(nvl / 2, 0.1)), round(noisy(nvl / 2, 0.1))]
            rows.append(row)
    head = ["timestamp", "host", "gpu", "uuid", "model", "namespace", "pod", "container", "job"] + FULL_COLS
    write("allreduce-internode-5s", head, rows, labels,
          "# an all-reduce across 2 nodes: 8 H100s (NVLink 20 GB/s) and 8 L40S (no NVLink), PCIe 11 GB/s each way to the NIC (gen.py)")


def write(name, head, rows, labels, comment):
    with open(name + ".csv", "w") as f:
        f.write(comment + "\n")
        f.write(",".join(head) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    with open(name + ".labels.csv", "w") as f:
        f.write("uuid,kind,value,start,end\n")
        for u, kind, v, s, e in labels:
            f.write("%s,%s,%s,%.3f,%.3f\n" % (u, kind, v, s, e))


default_counters()
allreduce()
