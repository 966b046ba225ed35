#!/bin/sh
# Stands in for `nvidia-smi --gpu-reset -i UUID` in the tests: appends the
# UUID to LOG (so a test knows what was reset, and in what order), sleeps
# SLEEP seconds (a reset takes a while), then exits with CODE, saying why
# on stderr as nvidia-smi does when CODE is not 0.
# Usage: fakereset.sh LOG CODE SLEEP UUID
log=$1 code=$2 sleep=$3 uuid=$4
echo "$uuid" >>"$log"
sleep "$sleep"
if [ "$code" != 0 ]; then
	echo "The following GPUs could not be reset:" >&2
	echo "  GPU $uuid: In use by another client" >&2
fi
exit "$code"
