#!/bin/sh
# Before @NAME@ is removed (not before an upgrade): the service stopped and
# disabled. dpkg passes "remove" (or "deconfigure"); rpm passes the number
# of versions left after the transaction, 0 on erase.
set -e
case "$1" in
	remove|deconfigure|0) ;;
	*) exit 0 ;;
esac
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	systemctl stop @NAME@.service || true
	systemctl disable @NAME@.service || true
fi
