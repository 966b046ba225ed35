#!/usr/bin/env python3
"""Writes the labelled node-evidence traces (README.md in this folder).

Every trace is sampled every 5 s, on H100s, with the node evidence columns
of docs/trace-node-evidence.md: each GPU's PCI bus ID, its pod's cgroup
counters and its rail NIC's counters, cumulative as the kernel counts them.

  multinode-ib-5s        4 nodes x 2 H100s, one InfiniBand NIC per GPU
                         (400 Gb/s). Computes 3 min, spends 5 min in
                         collectives, computes 3 min, 4 min in collectives.
                         In a collective: GPU utilization 100 %, SM active
                         0.12, PCIe ~43 GB/s each way (GPUDirect RDMA),
                         NVLink 8 GB/s, the rail NIC at 88-96 % of its rate
                         both ways.
  multinode-ib-nonic-5s  the same rows without the nic* columns.
  degraded-rail-5s       4 nodes x 2 H100s computing for 10 min; from 4 to
                         8 min one rank's rail counts symbol and receive
                         errors and its step is 22 % slower.
  loader-throttled-5s    1 node, 2 H100s of one pod at an 8-CPU limit; from
                         3 to 8 min its data loader is throttled in ~35 % of
                         CFS periods and the GPUs wait (SM active 0.22).
  dataset-read-5s        1 node, 2 H100s sharing one 100 Gb/s Ethernet NIC;
                         from 2 min on they wait for a dataset read over it:
                         receive at ~55 % of the rate, then from 6 min at
                         ~92 %, sending ~1 %.

Deterministic (seeded). Run from this folder: python3 gen.py
"""
import csv
import random

T0 = 1767225600
STEP = 5
MODEL = "NVIDIA H100 80GB HBM3"
FB_TOTAL = 81559

GPU_COLS = ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES",
            "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES"]
ID_COLS = ["timestamp", "host", "gpu", "uuid", "model", "namespace", "pod", "container", "job", "step_seconds"]
POD_COLS = ["pod_uid", "pod_cpu_limit", "pod_cpu_seconds", "pod_cpu_periods", "pod_cpu_throttled_periods",
            "pod_cpu_throttled_seconds", "pod_memory_bytes", "pod_memory_limit_bytes", "pod_cpu_pressure_seconds",
            "pod_memory_pressure_seconds", "pod_io_pressure_seconds"]
NIC_COLS = ["nic", "nic_link_layer", "nic_rate_gbps", "nic_rx_bytes", "nic_tx_bytes", "nic_up"]
IB_ERRORS = ["symbol_error", "link_downed", "port_rcv_errors"]
ETH_ERRORS = ["rx_errors", "rx_dropped"]

# GPU states: utilization %, SM active, occupancy, tensor, DRAM, power W,
# PCIe tx, rx (bytes/s), NVLink each way (bytes/s).
STATES = {
    "compute": (98, 0.88, 0.46, 0.55, 0.36, 610, 0.5e9, 1.1e9, 4e9),
    "collective": (100, 0.12, 0.05, 0.02, 0.10, 270, 43e9, 43e9, 4e9),
    "input": (41, 0.22, 0.12, 0.12, 0.12, 300, 0.3e9, 5.5e9, 0.2e9),
}


class Rng:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def noisy(self, x, rel=0.03):
        return x * (1 + self.r.uniform(-rel, rel))

    def between(self, lo, hi):
        return self.r.uniform(lo, hi)


class Pod:
    """A pod's cgroup: cumulative CPU time, CFS periods, pressure."""

    def __init__(self, uid, limit, mem_limit):
        self.uid, self.limit, self.mem_limit = uid, limit, mem_limit
        self.cpu = self.periods = self.throttled = self.throttled_s = 0.0
        self.psi = [0.0, 0.0, 0.0]  # cpu, memory, io
        self.mem = 0.0

    def advance(self, rng, used, throttled_share, psi_shares, mem):
        self.cpu += used * STEP
        if self.limit:
            p = STEP / 0.1  # 100 ms CFS periods
            self.periods += p
            self.throttled += p * throttled_share
            self.throttled_s += p * throttled_share * 0.035
        for i, s in enumerate(psi_shares):
            self.psi[i] += s * STEP * rng.noisy(1, 0.2)
        self.mem = mem

    def cells(self):
        c = [self.uid, self.limit or "", "%.3f" % self.cpu]
        if self.limit:
            c += [int(self.periods), int(self.throttled), "%.3f" % self.throttled_s]
        else:
            c += ["", "", ""]
        c += [int(self.mem), int(self.mem_limit) if self.mem_limit else ""]
        c += ["%.3f" % x for x in self.psi]
        return c


class NIC:
    """A NIC port: cumulative bytes each way and error counters."""

    def __init__(self, name, layer, gbps, errors):
        self.name, self.layer, self.gbps = name, layer, gbps
        self.rx = self.tx = 0.0
        self.errors = {e: 0.0 for e in errors}

    def advance(self, rng, rx_share, tx_share, error_rates=None):
        rate = self.gbps * 1e9 / 8
        self.rx += rx_share * rate * STEP
        self.tx += tx_share * rate * STEP
        for e, per_s in (error_rates or {}).items():
            self.errors[e] += per_s * STEP * rng.noisy(1, 0.2)

    def cells(self):
        return [self.name, self.layer, self.gbps, int(self.rx), int(self.tx), 1]

    def error_cells(self, names):
        return [int(self.errors[e]) if e in self.errors else "" for e in names]


def gpu_cells(rng, state, clock=1950):
    util, sm, occ, ten, dram, pw, tx, rx, nvl = STATES[state]
    fb = 60000
    return [min(100, round(rng.noisy(util, 0.02))), fb, FB_TOTAL - fb, round(rng.noisy(pw), 1), round(rng.noisy(62, 0.03)),
            round(rng.noisy(clock, 0.005)), 0, round(min(1, rng.noisy(sm)), 4), round(min(1, rng.noisy(occ)), 4),
            round(min(1, rng.noisy(ten)), 4), round(min(1, rng.noisy(dram)), 4), round(rng.noisy(tx, 0.05)),
            round(rng.noisy(rx, 0.05)), round(rng.noisy(nvl, 0.1)), round(rng.noisy(nvl, 0.1))]


def uuid(trace, i):
    return "GPU-7e1a%04x-0000-4c00-8000-%012x" % (trace, i)


def pod_uid(trace, i):
    return "5f0d%04x-1c2b-4e6a-9d3c-%012x" % (trace, i)


def bus_id(g):
    return "00000000:%02X:00.0" % (0x18 + 0x10 * g)


def write(name, comment, head, rows, labels):
    """NAME.csv (a comment line, the header, the rows) and NAME.labels.csv."""
    with open(name + ".csv", "w", newline="") as f:
        f.write("# %s (gen.py)\n" % comment)
        out = csv.writer(f, lineterminator="\n")
        out.writerow(head)
        out.writerows(rows)
    with open(name + ".labels.csv", "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["uuid", "kind", "value", "start", "end"])
        out.writerows([u, kind, v, "%.3f" % s, "%.3f" % e] for u, kind, v, s, e in labels)


def phases_of(spans):
    """[(state, seconds)] -> [(state, start, end)] from T0."""
    out, t = [], 0
    for st, d in spans:
        out.append((st, t, t + d))
        t += d
    return out


def state_at(phases, t):
    for st, s, e in phases:
        if s <= t < e:
            return st
    raise ValueError(t)


CLASS = {"compute": "compute_bound", "collective": "communication_bound", "input": "input_bound"}


def cluster(trace, prefix):
    """4 nodes x 2 GPUs of one job: each node one pod (32 CPUs), each GPU
    its own 400 Gb/s InfiniBand NIC. Returns the GPUs (uuid, host, index,
    rank), the pods by host and the NICs by GPU."""
    gpus, pods, nics = [], {}, {}
    for n in range(4):
        host = "%s-%d" % (prefix, n)
        pods[host] = Pod(pod_uid(trace, n), 32, 256 << 30)
        for g in range(2):
            u = uuid(trace, 2 * n + g)
            gpus.append((u, host, g, 2 * n + g))
            nics[u] = NIC("mlx5_%d:1" % g, "infiniband", 400, IB_ERRORS)
    return gpus, pods, nics


def multinode():
    """Traces (a) and (b): one job over 4 nodes x 2 GPUs, rail NIC per GPU."""
    rng = Rng(36)
    phases = phases_of([("compute", 180), ("collective", 300), ("compute", 180), ("collective", 240)])
    end = phases[-1][2]
    gpus, pods, nics = cluster(1, "ib-node")
    labels = []
    for u, _, _, _ in gpus:
        for st, s, e in phases:
            labels.append((u, "bottleneck", CLASS[st], T0 + s, T0 + e))
            if st == "collective":
                labels.append((u, "cause", "network_saturated", T0 + s, T0 + e))
    rows = []
    for t in range(0, end, STEP):
        st = state_at(phases, t)
        for host, p in pods.items():
            p.advance(rng, rng.noisy(12, 0.1), rng.between(0.002, 0.008), (0.02, 0.001, 0.01), rng.noisy(90 << 30, 0.02))
        for u, host, g, i in gpus:
            if st == "collective":
                share = rng.between(0.88, 0.96)
                nics[u].advance(rng, share, share * rng.between(0.97, 1.0))
            else:
                nics[u].advance(rng, rng.between(0.03, 0.06), rng.between(0.03, 0.06))
            rows.append([T0 + t, host, g, u, MODEL, "ml", "llm-pretrain-%d" % (i // 2), "trainer", "llm-pretrain",
                         round(rng.noisy(1.0, 0.02), 4)] + gpu_cells(rng, st) + [bus_id(g)] + pods[host].cells()
                        + nics[u].cells() + nics[u].error_cells(IB_ERRORS))
    head = ID_COLS + GPU_COLS + ["pci_bus_id"] + POD_COLS + NIC_COLS + ["nic_" + e for e in IB_ERRORS]
    write("multinode-ib-5s", "one job on 4 nodes x 2 H100s over InfiniBand: compute, collectives at 88-96 % of the rail, compute, collectives",
          head, rows, labels)
    # (b): the same rows without the NIC's columns; without them the cause
    # of a network wait is not looked for.
    keep = [k for k, h in enumerate(head) if not h.startswith("nic")]
    write("multinode-ib-nonic-5s", "multinode-ib-5s without the NIC columns",
          [head[k] for k in keep], [[r[k] for k in keep] for r in rows], [l for l in labels if l[1] != "cause"])


def degraded_rail():
    """Trace (c): one rank's rail counts errors and its step slows."""
    rng = Rng(37)
    end, bad_from, bad_to = 600, 240, 480
    gpus, pods, nics = cluster(2, "rail-node")
    labels = [(u, "bottleneck", "compute_bound", T0, T0 + end) for u, _, _, _ in gpus]
    slow = uuid(2, 5)  # rail-node-2, GPU 1, on mlx5_1
    labels.append((slow, "straggler", "true", T0 + bad_from, T0 + bad_to))
    labels.append((slow, "cause", "fabric_errors", T0 + bad_from, T0 + bad_to))
    # GPUStraggler is due 60 s after the rank turns slow.
    labels.append((slow, "alert", "GPUStraggler", T0 + bad_from + 60, T0 + bad_to))
    rows = []
    for t in range(0, end, STEP):
        bad = bad_from <= t < bad_to
        for p in pods.values():
            p.advance(rng, rng.noisy(12, 0.1), rng.between(0.002, 0.008), (0.02, 0.001, 0.01), rng.noisy(90 << 30, 0.02))
        for u, host, g, i in gpus:
            errs = None
            step = rng.noisy(1.0, 0.02)
            if u == slow and bad:
                # ~1,200 symbol errors and ~240 receive errors a minute,
                # the link downed once as it degraded.
                errs = {"symbol_error": 20, "port_rcv_errors": 4}
                if t == bad_from:
                    nics[u].errors["link_downed"] += 1
                step *= 1.22
            nics[u].advance(rng, rng.between(0.03, 0.06), rng.between(0.03, 0.06), errs)
            rows.append([T0 + t, host, g, u, MODEL, "ml", "llm-finetune-%d" % (i // 2), "trainer", "llm-finetune",
                         round(step, 4)] + gpu_cells(rng, "compute") + [bus_id(g)] + pods[host].cells()
                        + nics[u].cells() + nics[u].error_cells(IB_ERRORS))
    head = ID_COLS + GPU_COLS + ["pci_bus_id"] + POD_COLS + NIC_COLS + ["nic_" + e for e in IB_ERRORS]
    write("degraded-rail-5s", "4 nodes x 2 H100s computing; from 4 to 8 min one rank's rail counts symbol errors and its step is 22 % slower",
          head, rows, labels)


def single_node(trace, phases, host, pod, nic, errors, node_step):
    """Traces (d) and (e): 2 GPUs of one pod on one host, one shared NIC.
    Returns the GPUs, the header and the rows."""
    rng = Rng(36 + trace)
    end = phases[-1][2]
    gpus, rows = [uuid(trace, 0), uuid(trace, 1)], []
    for t in range(0, end, STEP):
        st = state_at(phases, t)
        node_step(rng, st, t, pod, nic)
        for g, u in enumerate(gpus):
            rows.append([T0 + t, host, g, u, MODEL, "cv", "resnet-train-0", "trainer", "resnet-train", ""]
                        + gpu_cells(rng, st) + [bus_id(g)] + pod.cells() + nic.cells() + nic.error_cells(errors))
    return gpus, ID_COLS + GPU_COLS + ["pci_bus_id"] + POD_COLS + NIC_COLS + ["nic_" + e for e in errors], rows


def loader_throttled():
    """Trace (d): the data loader at its CPU limit."""
    phases = phases_of([("compute", 180), ("input", 300), ("compute", 120)])
    pod = Pod(pod_uid(3, 0), 8, 64 << 30)
    nic = NIC("mlx5_0:1", "infiniband", 400, IB_ERRORS)

    def step(rng, st, t, pod, nic):
        if st == "input":
            pod.advance(rng, 8 * rng.between(0.95, 0.99), rng.between(0.30, 0.40), (0.20, 0.002, 0.02), rng.noisy(30 << 30, 0.02))
        else:
            pod.advance(rng, rng.noisy(4.5, 0.1), rng.between(0.005, 0.02), (0.03, 0.002, 0.01), rng.noisy(30 << 30, 0.02))
        nic.advance(rng, rng.between(0.005, 0.01), rng.between(0.005, 0.01))

    gpus, head, rows = single_node(3, phases, "cpu-node-0", pod, nic, IB_ERRORS, step)
    labels = []
    for u in gpus:
        for st, s, e in phases:
            labels.append((u, "bottleneck", CLASS[st], T0 + s, T0 + e))
            if st == "input":
                labels.append((u, "cause", "cpu_throttled", T0 + s, T0 + e))
    write("loader-throttled-5s", "2 H100s of one pod at an 8-CPU limit; from 3 to 8 min its data loader is throttled and the GPUs wait",
          head, rows, labels)


def dataset_read():
    """Trace (e): a one-way dataset read on the NIC while the GPUs wait."""
    phases = phases_of([("compute", 120), ("input", 240), ("input", 240)])
    pod = Pod(pod_uid(4, 0), 0, 0)
    nic = NIC("eth0", "ethernet", 100, ETH_ERRORS)

    def step(rng, st, t, pod, nic):
        pod.advance(rng, rng.noisy(6, 0.1), 0, (0.03, 0.002, 0.02), rng.noisy(40 << 30, 0.02))
        if st == "compute":
            nic.advance(rng, rng.between(0.01, 0.02), rng.between(0.005, 0.01))
        elif t < 360:
            nic.advance(rng, rng.between(0.52, 0.58), rng.between(0.008, 0.012))
        else:
            nic.advance(rng, rng.between(0.90, 0.94), rng.between(0.008, 0.012))

    gpus, head, rows = single_node(4, phases, "data-node-0", pod, nic, ETH_ERRORS, step)
    labels = []
    for u in gpus:
        labels.append((u, "bottleneck", "compute_bound", T0, T0 + 120))
        labels.append((u, "bottleneck", "input_bound", T0 + 120, T0 + 600))
        labels.append((u, "cause", "none_found", T0 + 120, T0 + 360))
        labels.append((u, "cause", "network_saturated", T0 + 360, T0 + 600))
    write("dataset-read-5s", "2 H100s sharing a 100 Gb/s Ethernet NIC wait for a dataset read over it: 55 %, then 92 % of the rate, one way",
          head, rows, labels)


multinode()
degraded_rail()
loader_throttled()
dataset_read()
