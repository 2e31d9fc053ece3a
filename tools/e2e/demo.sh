#!/usr/bin/env bash
# Demo: a Slurm GPU cluster on this machine (one controller, two GPU hosts, real slurmctld,
# slurmd and munge in namespaces), printed with Slurm's own tools, then torn down.
#
#   bash tools/e2e/demo.sh                 # hand-written slurm.conf/gres.conf (tests/e2e/fixtures)
#
# Needs root and Debian's slurmctld slurmd slurm-client munge iproute2 (see docs/e2e.md).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
e2e=$repo/tools/e2e

if [[ $(id -u) -ne 0 ]]; then
    echo "demo: needs root (namespaces, mounts, device nodes)" >&2
    exit 1
fi
for p in slurmctld slurmd munged srun sinfo scontrol unshare nsenter ip setpriv; do
    if ! command -v "$p" >/dev/null; then
        echo "demo: $p is missing: apt-get install slurmctld slurmd slurm-client munge iproute2" >&2
        exit 1
    fi
done
if ! unshare --uts --mount --net --pid --cgroup --fork -- true 2>/dev/null; then
    echo "demo: this machine does not allow creating namespaces, which the multi-host demo needs" >&2
    exit 1
fi

start=$(date +%s.%N)
dir=$(mktemp -d /tmp/e2e-demo-XXXXXX)
coproc SERVE { exec "$e2e/cluster" serve "$dir" e2e-ctl=10.77.0.10/24 e2e-a=10.77.0.11/24 e2e-b=10.77.0.12/24; }
# shellcheck disable=SC2153 # SERVE_PID is set by coproc
serve_pid=$SERVE_PID
serve_in=${SERVE[1]}
cleanup() {
    exec {serve_in}>&- || true
    wait "$serve_pid" 2>/dev/null || true
    rm -rf "$dir"
    echo "demo: cluster stopped and removed ($(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)") s in all)"
}
trap cleanup EXIT
read -r ready <&"${SERVE[0]}" || true
if [[ $ready != ready ]]; then
    echo "demo: the cluster did not start" >&2
    exit 1
fi

in_host() {
    local h=$1
    shift
    SLURM_CHARMS_ROOT=$dir/hosts/$h/root PATH=$e2e/bin:$PATH "$e2e/cluster" exec "$dir" "$h" -- "$@"
}
root() { echo "$dir/hosts/$1/root"; }

# What the charms do, by hand: one munge key, the controller's configs, configless slurmd.
for h in e2e-a e2e-b; do
    install -o munge -g munge -m 0400 "$(root e2e-ctl)/etc/munge/munge.key" "$(root "$h")/etc/munge/munge.key"
    printf 'SLURMD_OPTIONS="--conf-server e2e-ctl:6817"\n' >"$(root "$h")/etc/default/slurmd"
    mkdir -p "$(root "$h")/etc/systemd/system/slurmd.service.d"
    printf '[Unit]\nConditionPathExists=\n' >"$(root "$h")/etc/systemd/system/slurmd.service.d/10-slurm-charms.conf"
done
cp "$repo"/tests/e2e/fixtures/{slurm,gres,cgroup}.conf "$(root e2e-ctl)/etc/slurm/"
for m in 0 1; do mknod "$(root e2e-a)/dev/nvidia$m" c 195 "$m"; done
for m in 0 1 2 3; do mknod "$(root e2e-b)/dev/nvidia$m" c 195 "$m"; done
for h in e2e-ctl e2e-a e2e-b; do in_host "$h" systemctl enable --now munge; done
in_host e2e-ctl systemctl enable --now slurmctld
for h in e2e-a e2e-b; do
    in_host "$h" systemctl daemon-reload
    in_host "$h" systemctl enable --now slurmd
done
for _ in $(seq 1 120); do
    if [[ $(in_host e2e-ctl sinfo -h -t idle -o '%D' 2>/dev/null) == 2 ]]; then break; fi
    sleep 0.25
done

section() { printf '\n===== %s\n' "$1"; }
section "gres.conf (e2e-ctl:/etc/slurm/gres.conf)"
cat "$(root e2e-ctl)/etc/slurm/gres.conf"
section "slurm.conf (e2e-ctl:/etc/slurm/slurm.conf)"
cat "$(root e2e-ctl)/etc/slurm/slurm.conf"
section "sinfo"
in_host e2e-ctl sinfo
section "sinfo -N -o '%N %T %G'"
in_host e2e-ctl sinfo -N -o '%N %T %G'
section "srun --gres=gpu:tesla_t4:1 -w e2e-a env | grep CUDA_VISIBLE_DEVICES"
in_host e2e-ctl srun --gres=gpu:tesla_t4:1 -w e2e-a env | grep CUDA_VISIBLE_DEVICES
section "srun --gres=gpu:nvidia_h100_80gb_hbm3:2 -w e2e-b env | grep CUDA_VISIBLE_DEVICES"
in_host e2e-ctl srun --gres=gpu:nvidia_h100_80gb_hbm3:2 -w e2e-b env | grep CUDA_VISIBLE_DEVICES
