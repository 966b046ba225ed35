#!/bin/sh
# Before @NAME@'s files are unpacked: the service's own system user, shared
# by otelcol-gpu and otelcol-gpu-agent, with no login and no home. The user
# stays on remove and purge, as Debian's policy advises for system users:
# files it wrote may outlive the package.
set -e
if ! getent group otelcol-gpu >/dev/null; then
	groupadd --system otelcol-gpu
fi
if ! getent passwd otelcol-gpu >/dev/null; then
	useradd --system --gid otelcol-gpu --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --comment "otelcol-gpu collector" otelcol-gpu
fi
