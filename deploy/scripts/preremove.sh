#!/bin/sh
# Stops the service before its binary goes, on removal only: an upgrade
# (deb "upgrade", rpm "1") keeps it running until postinstall restarts it.
set -e
case "$1" in
  upgrade|1) exit 0 ;;
esac
if [ -d /run/systemd/system ]; then
  systemctl disable --now herald >/dev/null 2>&1 || true
fi
