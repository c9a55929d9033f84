#!/bin/sh
# Forgets the removed unit. The database in /var/lib/herald and the
# herald user stay: removing a package never deletes data.
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
fi
