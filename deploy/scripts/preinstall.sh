#!/bin/sh
# Creates the herald system user and group the service runs as, before the
# package's files (owned by that group) are unpacked. Runs on every install
# and upgrade; it changes nothing once they exist.
set -e
if ! getent group herald >/dev/null; then
  groupadd --system herald
fi
if ! getent passwd herald >/dev/null; then
  nologin=$(command -v nologin || echo /usr/sbin/nologin)
  useradd --system --gid herald --home-dir /var/lib/herald --no-create-home \
    --shell "$nologin" --comment "Herald notification service" herald
fi
