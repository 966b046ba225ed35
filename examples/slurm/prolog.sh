#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/*): write the job's
# GPUs into dcgm-exporter's HPC job mapping layout, which the dcgm
# receiver reads (slurm::job_mapping_dir) as dcgm-exporter does
# (--hpc-job-mapping-dir): one file per GPU, named by its index, or
# <GPU index>.<GPU instance ID> for a MIG instance, each line the ID of a
# job on it. A GPU two jobs share (gres/shard, MPS) has two lines: a
# --gres=shard:K job's prolog gets SLURM_JOB_GPUS of its shards' GPU, as a
# GPU job's does (seen under Slurm 22.05, TestSlurmRealClusterSharedGPU).
#
# slurmd runs it as root on each of the job's nodes before the job starts,
# with SLURM_JOB_ID and SLURM_JOB_GPUS (the job's GPU indices on this
# node, "0,1"; Slurm's prolog_epilog guide) set, and CUDA_VISIBLE_DEVICES
# as well. A prolog that exits non-zero drains the node: this one
# reports what it could not do on stderr (slurmd's log) and exits 0, so
# that attribution, which is telemetry, never takes a node out of service.
#
# Settings, from the environment (PrologFlags=Contain passes slurmd's):
#   SLURM_GPU_JOB_MAP_DIR  the mapping directory; default /run/slurm-gpu-jobs
#                          (a tmpfs: no jobs survive a reboot)
#   SLURM_GPU_MIG_MAP      on MIG nodes, a file of lines "<gres index> <GPU>.<GI>"
#                          naming each GRES index's MIG instance (the order of
#                          gres.conf's MIG lines); without it the files are
#                          named by the GRES index, as on a node without MIG.
set -u
umask 022 # the files readable by the agent's user, as dcgm-exporter's were

dir=${SLURM_GPU_JOB_MAP_DIR:-/run/slurm-gpu-jobs}
job=${SLURM_JOB_ID:-}
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}
mig=${SLURM_GPU_MIG_MAP:-}

warn() { echo "slurm-gpu-job-map prolog: job ${job:-?}: $*" >&2; }

case $job in
'' | *[!0-9]*) warn "SLURM_JOB_ID \"$job\" is not a job ID; nothing written"; exit 0 ;;
esac
[ -n "$gpus" ] || exit 0 # a job without GPUs on this node

if ! mkdir -p "$dir" 2>/dev/null; then
	warn "cannot create $dir"
	exit 0
fi

# file names the mapping file of a GRES index.
file() {
	if [ -n "$mig" ] && [ -r "$mig" ]; then
		awk -v i="$1" '$1 == i { print $2; exit }' "$mig"
	else
		echo "$1"
	fi
}

# One job's prolog and another's epilog may run at once on a shared GPU:
# the files change under a lock, each by a rename, so that the receiver
# never reads half a file.
exec 9>"$dir/.lock" || { warn "cannot open $dir/.lock"; exit 0; }
flock -w 10 9 || { warn "$dir/.lock held for 10 s; nothing written"; exit 0; }

old_ifs=$IFS
IFS=,
for idx in $gpus; do
	IFS=$old_ifs
	case $idx in
	'' | *[!0-9]*) warn "GPU \"$idx\" is not an index (a UUID in CUDA_VISIBLE_DEVICES?); skipped"; continue ;;
	esac
	name=$(file "$idx")
	case $name in
	'' | *[!0-9.]* | .* | *. | *.*.*) warn "GRES index $idx: no mapping file name (\"$name\" in $mig); skipped"; continue ;;
	esac
	f=$dir/$name
	if [ -f "$f" ] && grep -qx "$job" "$f"; then
		continue # a requeued job's prolog, again
	fi
	{ [ -f "$f" ] && cat "$f"; echo "$job"; } >"$f.tmp.$$" && mv -f "$f.tmp.$$" "$f" ||
		warn "cannot write $f"
done
exit 0
