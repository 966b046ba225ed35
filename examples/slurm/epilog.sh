#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*): remove the job
# from dcgm-exporter's HPC job mapping files that prolog.sh wrote, so that
# its GPUs are no one's once it ends (or another job's, on a shared GPU).
#
# Every mapping file is read, not only those of SLURM_JOB_GPUS: a job whose
# GPUs changed (scontrol update, a MIG map edited while it ran) leaves no
# line behind. A file left with no job is removed. Like the prolog it exits
# 0 whatever happens (an epilog that fails drains the node) and says on
# stderr what it could not do. Settings as in prolog.sh.
set -u
umask 022

dir=${SLURM_GPU_JOB_MAP_DIR:-/run/slurm-gpu-jobs}
job=${SLURM_JOB_ID:-}

warn() { echo "slurm-gpu-job-map epilog: job ${job:-?}: $*" >&2; }

case $job in
'' | *[!0-9]*) warn "SLURM_JOB_ID \"$job\" is not a job ID; nothing removed"; exit 0 ;;
esac
[ -d "$dir" ] || exit 0

exec 9>"$dir/.lock" || { warn "cannot open $dir/.lock"; exit 0; }
flock -w 10 9 || { warn "$dir/.lock held for 10 s; nothing removed"; exit 0; }

for f in "$dir"/*; do
	[ -f "$f" ] || continue
	case ${f##*/} in
	*[!0-9.]* | .* | *. | *.*.*) continue ;; # not a mapping file (.lock, a temporary)
	esac
	grep -qx "$job" "$f" || continue
	if grep -vx "$job" "$f" >"$f.tmp.$$"; then
		mv -f "$f.tmp.$$" "$f" || warn "cannot rewrite $f"
	else
		rm -f "$f.tmp.$$" "$f" || warn "cannot remove $f" # it named this job only
	fi
done
exit 0
