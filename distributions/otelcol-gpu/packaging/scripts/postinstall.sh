#!/bin/sh
# After @NAME@ is installed or upgraded: the unit enabled and (re)started
# where systemd runs; elsewhere (a container, a chroot, CI) nothing, and
# the service is started by hand with the unit's ExecStart.
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	systemctl daemon-reload
	systemctl enable @NAME@.service
	systemctl restart @NAME@.service
fi
