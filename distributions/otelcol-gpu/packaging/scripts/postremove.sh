#!/bin/sh
# After @NAME@'s files are removed. On purge (dpkg only: rpm has no purge,
# and keeps a changed config as .rpmsave) the state systemd kept for the
# service (StateDirectory: the sending queue on disk) goes too; dpkg
# itself removes the configuration files.
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	systemctl daemon-reload || true
fi
if [ "$1" = purge ]; then
	rm -rf /var/lib/@NAME@
fi
