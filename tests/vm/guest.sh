#!/bin/sh
# guest.sh - runs inside the test VM as a systemd service (root, in
# system.slice).  Writes one TAP stream to /vm-results/guest.tap, echoing
# every line to the console so the host sees progress, then /vm-results/done.
set -u
R=/vm-results
exec 3>"$R/guest.tap"
emit() { echo "$*" >&3; echo "$*"; }
emit "# kernel $(uname -r); $(systemctl --version | head -n1)"
emit "# cgroup: $(stat -fc %T /sys/fs/cgroup) controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
emit "# self: $(cat /proc/self/cgroup)"
emit "ok 1 - the guest booted with systemd"
emit "1..1"
touch "$R/done"
