#!/bin/sh
# Makes systemd read the unit. A first install leaves the service stopped,
# for the settings to be written first; an upgrade restarts it if it ran,
# and the new binary migrates the database as it starts.
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
  if systemctl is-active --quiet herald; then
    systemctl restart herald || true
  fi
fi
