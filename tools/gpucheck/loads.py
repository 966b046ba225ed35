#!/usr/bin/env python3
"""The GPU check's loads: a fixed sequence of labelled phases on one GPU.

Subcommands (run.sh calls them; see docs/gpu-check.md):

  run --out DIR --uuid GPU-...   run the phases on the GPU (PyTorch), writing
                                 DIR/labels.csv, DIR/phases.csv, DIR/legend.txt
  plan --out DIR                 the simulated run: DIR/fleet.yaml, a fleet of
                                 one GPU going through the same phases; prints
                                 the schedule's length in seconds
  labels --out DIR --trace FILE  the simulated run's labels, from the trace's
                                 first timestamp and GPU
  facts                          this machine's torch and CUDA versions, one
                                 "key: value" line each
  worker --until TIME            one time-sliced process (run starts two)

The schedule is one list (PHASES) for both runs, so the simulated run goes
through the same phases, in the same order, for the same time. Only the
standard library is needed but for `run`, `facts` and `worker` (PyTorch).
"""

import argparse
import csv
import os
import subprocess
import sys
import time

# How long each phase lasts, and how much of it is scored: the analyzer
# classifies over a trailing 30 s window, so until 30 s into a phase its
# verdict still averages the previous one; 2 s more for the edge between
# this script's clock and the recorder's sample. The last 2 s are left out
# for the same reason.
def seconds(name, default):
    raw = os.environ.get(name, default)
    try:
        return float(raw)
    except ValueError:
        print(f"loads.py: {name}: want seconds, got {raw!r}", file=sys.stderr)
        sys.exit(2)


PHASE_SECONDS = seconds("GPU_CHECK_PHASE_SECONDS", "50")
LEAD_SECONDS = seconds("GPU_CHECK_LEAD_SECONDS", "32")
TAIL_SECONDS = 2.0

# name, the analyzer's class expected, the simulated fleet's phase kind,
# what the phase runs. The classes are the analyzer contract's.
PHASES = [
    ("compute", "compute_bound", "compute_bound",
     "bf16 matmul training loop (8192-wide two-layer MLP, forward and backward, SGD step)"),
    ("copy", "memory_bound", "memory_bound",
     "device-to-device copies of two 2 GiB tensors, back to back"),
    ("starved", "input_bound", "input_bound",
     "training steps fed by a loader that sleeps 3x the step time between batches"),
    ("fake", "launch_bound", "launch_bound",
     "a one-thread spin kernel in a loop on streams covering ~15 % of the SMs: utilization ~100 %, little SM activity"),
    ("idle-held", "idle", "idle",
     "nothing running, half the free memory held"),
    ("leak", "compute_bound", "compute_bound",
     "the compute loop keeping a 0.5 %-of-memory tensor every second (a leak)"),
    ("timeslice", "compute_bound", "compute_bound",
     "two processes running the compute loop at once, time-sliced by the driver"),
]

# Why the leak phase has no alert label: the analyzer's GPUMemoryLeak fits
# 15 min of samples at least and then holds for 10 min.
LEAK_NOTE = ("GPUMemoryLeak is not expected: it needs 15 min of samples "
             "and fires after 10 min of growth; the phase shows the growth in FB_USED")


def fail(msg):
    print(f"loads.py: {msg}", file=sys.stderr)
    sys.exit(1)


def check_durations():
    """Bad settings exit with status 2, as run.sh's own do."""
    if not PHASE_SECONDS > LEAD_SECONDS + TAIL_SECONDS:
        print(f"loads.py: GPU_CHECK_PHASE_SECONDS ({PHASE_SECONDS:g}) must be more than "
              f"GPU_CHECK_LEAD_SECONDS ({LEAD_SECONDS:g}) + {TAIL_SECONDS:g}: nothing of a phase would be scored",
              file=sys.stderr)
        sys.exit(2)
    if LEAD_SECONDS < 0:
        print(f"loads.py: GPU_CHECK_LEAD_SECONDS must not be negative, got {LEAD_SECONDS:g}", file=sys.stderr)
        sys.exit(2)


class Book:
    """The labels and the phase list, written as phases end, so that an
    interrupted run keeps the phases it finished."""

    def __init__(self, out, uuid, simulated=False):
        self.out, self.uuid, self.rows, self.simulated = out, uuid, [], simulated
        with open(os.path.join(out, "labels.csv"), "w", newline="") as f:
            f.write("uuid,kind,value,start,end\n")

    def add(self, name, label, start, end, status, note=""):
        self.rows.append((name, label, start, end, status, note))
        if status == "ran":
            with open(os.path.join(self.out, "labels.csv"), "a", newline="") as f:
                csv.writer(f, lineterminator="\n").writerow(
                    [self.uuid, "bottleneck", label, f"{start + LEAD_SECONDS:.3f}", f"{end - TAIL_SECONDS:.3f}"])
        self.write()

    def write(self):
        with open(os.path.join(self.out, "phases.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["phase", "label", "start", "end", "status", "note"])
            for name, label, start, end, status, note in self.rows:
                w.writerow([name, label, f"{start:.3f}", f"{end:.3f}", status, note])
        # The legend numbers the phases that ran as gpureplay -labels
        # numbers its rows: in the labels' order.
        desc = {p[0]: (f"the fleet's {p[2]} phase; on a GPU: " if self.simulated else "") + p[3] for p in PHASES}
        lines, n = [], 0
        for name, label, start, end, status, note in self.rows:
            if status == "ran":
                n += 1
                lines.append(f"  {n}. {name} ({label}): {desc.get(name, '')}" + (f" [{note}]" if note else ""))
            elif status == "skipped":
                lines.append(f"  -. {name}: skipped: {note}")
            else:
                lines.append(f"  -. {name}: {note}")
        with open(os.path.join(self.out, "legend.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


# ---- the simulated run ---------------------------------------------------

def cmd_plan(args):
    check_durations()
    phases = "\n".join(f"      - {{kind: {p[2]}, duration: {PHASE_SECONDS:g}s}}  # {p[0]}" for p in PHASES)
    leak = [i for i, p in enumerate(PHASES) if p[0] == "leak"][0]
    # The leak: the frame buffer grows linearly over the phase, as the
    # real loop's does, a quarter of the way from the phase's level to full.
    fleet = f"""# The GPU check's simulated fleet (written by tools/gpucheck/loads.py plan):
# one H100 going through the check's phases once, {PHASE_SECONDS:g} s each.
seed: 40
hosts: 1
gpus_per_host: 1
host_prefix: gpu-check-
models: [h100]
workloads:
  - name: gpu-check
    kind: serving
    namespace: gpu-check
    gpus: "0/0"
    phases:
{phases}
faults:
  - {{kind: memory_growth, gpus: "0/0", start: {leak * PHASE_SECONDS:g}s, duration: {PHASE_SECONDS:g}s, ramp: {4 * PHASE_SECONDS:g}s}}
"""
    with open(os.path.join(args.out, "fleet.yaml"), "w") as f:
        f.write(fleet)
    print(f"{len(PHASES) * PHASE_SECONDS:g}")


def first_row(path):
    """The first data row's timestamp and uuid of a trace."""
    with open(path, newline="") as f:
        rows = csv.reader(line for line in f if not line.startswith("#"))
        header = next(rows, None)
        if not header or header[:2] != ["timestamp", "uuid"]:
            fail(f"{path}: not a trace (want a header starting timestamp,uuid)")
        for row in rows:
            try:
                return float(row[0]), row[1]
            except (ValueError, IndexError):
                fail(f"{path}: line {rows.line_num}: bad row {row[:2]}")
    fail(f"{path}: no rows")


def cmd_labels(args):
    check_durations()
    t0, uuid = first_row(args.trace)
    book = Book(args.out, uuid, simulated=True)
    for i, (name, label, _, _) in enumerate(PHASES):
        start = t0 + i * PHASE_SECONDS
        note = LEAK_NOTE if name == "leak" else ""
        if name == "timeslice":
            note = "simulated: one compute-bound load; the fleet cannot change a GPU's sharing mid-run"
        if name == "idle-held":
            note = "simulated: the idle phase's frame buffer is nearly empty"
        book.add(name, label, start, start + PHASE_SECONDS, "ran", note)
    book.add("mig", "", t0, t0, "skipped", "the simulated GPU is not split into MIG instances")


# ---- the real run ----------------------------------------------------------

def smi(*query):
    """nvidia-smi's answer for the check's GPU, or None without it."""
    try:
        out = subprocess.run(["nvidia-smi", *query], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def cmd_facts(_):
    import torch  # noqa: PLC0415 (PyTorch only where a GPU is)
    print(f"torch: {torch.__version__}")
    print(f"torch CUDA: {torch.version.cuda}")
    print(f"python: {sys.version.split()[0]}")
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        print(f"torch device: {p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.1f} GiB")


def train_step(torch, x, w1, w2, lr=1e-4):
    """One step of a two-layer MLP: forward, backward, SGD."""
    h = torch.relu(x @ w1)
    loss = (h @ w2).float().pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for w in (w1, w2):
            w -= lr * w.grad
            w.grad = None
    return loss


def mlp(torch, width, batch):
    dev = "cuda"
    x = torch.randn(batch, width, device=dev, dtype=torch.bfloat16)
    w1 = (torch.randn(width, width, device=dev, dtype=torch.bfloat16) / width**0.5).requires_grad_()
    w2 = (torch.randn(width, width, device=dev, dtype=torch.bfloat16) / width**0.5).requires_grad_()
    return x, w1, w2


def until(torch, deadline, step, sync_every=10):
    """step() until deadline, synchronizing every few steps so that queued
    kernels do not run past the phase."""
    n = 0
    while time.time() < deadline:
        step()
        n += 1
        if n % sync_every == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return n


def phase_compute(torch, deadline):
    x, w1, w2 = mlp(torch, 8192, 8192)
    n = until(torch, deadline, lambda: train_step(torch, x, w1, w2))
    return f"{n} steps"


def phase_copy(torch, deadline):
    free, _ = torch.cuda.mem_get_info()
    n_bytes = min(2 << 30, free // 4)
    src = torch.empty(n_bytes, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    n = until(torch, deadline, lambda: dst.copy_(src), sync_every=50)
    return f"{n} copies of {n_bytes / 2**30:.2f} GiB"


def phase_starved(torch, deadline):
    x, w1, w2 = mlp(torch, 4096, 4096)
    host = torch.randn(4096, 4096).pin_memory()
    for _ in range(5):  # warm up before timing the step
        train_step(torch, x, w1, w2)
    torch.cuda.synchronize()
    t = time.time()
    for _ in range(10):
        train_step(torch, x, w1, w2)
    torch.cuda.synchronize()
    step_s = (time.time() - t) / 10
    n = 0
    while time.time() < deadline:
        time.sleep(3 * step_s)  # the loader: the GPU waits for its batch
        x.copy_(host, non_blocking=True)
        train_step(torch, x, w1, w2)
        torch.cuda.synchronize()
        n += 1
    return f"{n} steps of {step_s * 1e3:.1f} ms, {3 * step_s * 1e3:.1f} ms asleep before each"


def phase_fake(torch, deadline):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    n_streams = max(1, round(0.15 * sms))
    streams = [torch.cuda.Stream() for _ in range(n_streams)]
    spin = getattr(torch.cuda, "_sleep", None)
    if spin is None:
        # No spin kernel in this PyTorch: a one-element kernel in a loop,
        # which leaves the GPU less busy between launches.
        t = torch.zeros(1, device="cuda")

        def spin(_):
            t.add_(1)

    def step():
        for s in streams:
            with torch.cuda.stream(s):
                spin(1_000_000)  # ~0.5 ms at 2 GHz, one thread

    n = until(torch, deadline, step, sync_every=20)
    kind = "spin kernels" if hasattr(torch.cuda, "_sleep") else "one-element kernels (no torch.cuda._sleep)"
    return f"{n} rounds of {n_streams} {kind} on {sms} SMs"


def phase_idle_held(torch, deadline):
    free, _ = torch.cuda.mem_get_info()
    held = torch.empty(free // 2, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    time.sleep(max(0.0, deadline - time.time()))
    del held
    return f"held {free / 2 / 2**30:.1f} GiB"


def phase_leak(torch, deadline):
    x, w1, w2 = mlp(torch, 8192, 8192)
    _, total = torch.cuda.mem_get_info()
    chunk = int(total * 0.005)
    kept, next_leak = [], time.time()

    def step():
        nonlocal next_leak
        train_step(torch, x, w1, w2)
        if time.time() >= next_leak:
            kept.append(torch.empty(chunk, dtype=torch.uint8, device="cuda").fill_(0))
            next_leak += 1.0

    n = until(torch, deadline, step)
    grown = len(kept) * chunk / 2**30
    kept.clear()
    return f"{n} steps, {grown:.1f} GiB kept; {LEAK_NOTE}"


def phase_timeslice(torch, deadline):
    # The deadline, not a length: each worker spends seconds importing
    # PyTorch before its loop starts.
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "worker", "--until", f"{deadline:.3f}"])
             for _ in range(2)]
    codes = [p.wait(timeout=deadline - time.time() + 120) for p in procs]
    if any(codes):
        raise RuntimeError(f"time-sliced workers exited with {codes}")
    return f"two processes, pids {' '.join(str(p.pid) for p in procs)}"


def cmd_worker(args):
    import torch  # noqa: PLC0415
    x, w1, w2 = mlp(torch, 8192, 8192)
    until(torch, args.until, lambda: train_step(torch, x, w1, w2))


def sharing(uuid):
    """Whether two processes may share the GPU (time-slicing), and why not."""
    mode = smi("--query-gpu=compute_mode", "--format=csv,noheader", "-i", uuid)
    if mode is None:
        return False, "nvidia-smi did not say the GPU's compute mode"
    if mode.lower() not in ("default", "[n/a]"):
        return False, f"compute mode {mode}: one process at a time; changing it needs root"
    return True, ""


def cmd_run(args):
    check_durations()
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")  # the fake load's streams run at once
    import torch  # noqa: PLC0415
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA GPU (CUDA_VISIBLE_DEVICES=%s)" % os.environ.get("CUDA_VISIBLE_DEVICES", ""))
    mig = smi("--query-gpu=mig.mode.current", "--format=csv,noheader", "-i", args.uuid) or "unknown"
    if mig.lower() == "enabled":
        fail(f"MIG mode is enabled on {args.uuid}: the check's loads need the whole GPU, and it never "
             "changes MIG (that needs root and a GPU reset); pick another GPU with GPU_CHECK_GPU")
    book = Book(args.out, args.uuid)
    # Warm up (CUDA context, cuBLAS) outside every phase.
    x, w1, w2 = mlp(torch, 1024, 1024)
    train_step(torch, x, w1, w2)
    torch.cuda.synchronize()
    del x, w1, w2
    runs = {"compute": phase_compute, "copy": phase_copy, "starved": phase_starved, "fake": phase_fake,
            "idle-held": phase_idle_held, "leak": phase_leak, "timeslice": phase_timeslice}
    for name, label, _, _ in PHASES:
        if name == "timeslice":
            ok, why = sharing(args.uuid)
            if not ok:
                book.add(name, label, time.time(), time.time(), "skipped", why)
                print(f"loads.py: {name}: skipped: {why}", flush=True)
                continue
        start = time.time()
        deadline = start + PHASE_SECONDS
        print(f"loads.py: {name} ({label}) for {PHASE_SECONDS:g} s", flush=True)
        try:
            note = runs[name](torch, deadline)
        except Exception as e:  # noqa: BLE001 (a failed load is a row, the rest still run)
            note = f"failed: {type(e).__name__}: {e}"
        torch.cuda.empty_cache()
        # A load that ended early (a failure) leaves the GPU idle: wait so
        # that every phase spans its time and the next starts on schedule.
        time.sleep(max(0.0, deadline - time.time()))
        status = "failed" if note.startswith("failed") else "ran"
        book.add(name, label, start, time.time(), status, note)
        print(f"loads.py: {name}: {note}", flush=True)
    book.add("mig", "", time.time(), time.time(), "skipped",
             f"MIG mode {mig.lower()}: enabling it needs root and a GPU reset, which the check never does")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("--out", required=True)
    p.add_argument("--uuid", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--out", required=True)
    p = sub.add_parser("labels")
    p.add_argument("--out", required=True)
    p.add_argument("--trace", required=True)
    sub.add_parser("facts")
    p = sub.add_parser("worker")
    p.add_argument("--until", type=float, required=True, help="Unix time to stop at")
    args = ap.parse_args()
    if getattr(args, "out", None) and not os.path.isdir(args.out):
        fail(f"--out {args.out}: not a directory")
    {"run": cmd_run, "plan": cmd_plan, "labels": cmd_labels, "facts": cmd_facts, "worker": cmd_worker}[args.cmd](args)


if __name__ == "__main__":
    main()
