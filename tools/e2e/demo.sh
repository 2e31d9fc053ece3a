#!/usr/bin/env bash
# Demo: a Slurm GPU cluster on this machine, printed with Slurm's own tools, then torn down.
# One controller host and two GPU hosts (namespaces; docs/e2e.md) run Debian's real slurmctld,
# slurmd and munged.
#
#   bash tools/e2e/demo.sh                 # the charms: every hook run by juju-sim (cluster.yaml)
#   bash tools/e2e/demo.sh --hand-written  # no charms: tests/e2e/fixtures/*.conf
#   E2E_SUITE=trixie bash tools/e2e/demo.sh   # hosts on Slurm 24.11 (sid: 26.05; roots.sh)
#
# Needs root and Debian's slurmctld slurmd slurm-client munge iproute2 (see docs/e2e.md).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
e2e=$repo/tools/e2e
mode=charms
case ${1:-} in
    "") ;;
    --hand-written) mode=hand-written ;;
    *)
        sed -n '2,10p' "${BASH_SOURCE[0]}" >&2
        exit 2
        ;;
esac

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

if [[ $mode == charms ]]; then
    echo "demo: building the charm binary, juju-sim and the fake NVML (cargo build --release)"
    (cd "$repo" && cargo build --release -q -p slurm-charms -p juju-sim -p fake-nvml)
    target=${CARGO_TARGET_DIR:-$repo/target}/release
    ctl=slurmctld-0 a=slurmd-0 b=slurmd-1
else
    ctl=e2e-ctl a=e2e-a b=e2e-b
fi
start=$(date +%s%N)
dir=$(mktemp -d /tmp/e2e-demo-XXXXXX)
work=$dir/work
mkdir -p "$work"
suite_args=()
if [[ ${E2E_SUITE:-bookworm} != bookworm ]]; then
    sysroot=$("$e2e/roots.sh" "$E2E_SUITE")
    suite_args=(--root "$sysroot" --bind "$repo" --bind /tmp --bind "${CARGO_TARGET_DIR:-$repo/target}")
fi
coproc SERVE { exec "$e2e/cluster" serve "$dir" "${suite_args[@]}" "$ctl=10.0.0.1/24" "$a=10.0.0.2/24" "$b=10.0.0.3/24"; }
# shellcheck disable=SC2153 # SERVE_PID is set by coproc
serve_pid=$SERVE_PID
serve_in=${SERVE[1]}
cleanup() {
    exec {serve_in}>&- || true
    wait "$serve_pid" 2>/dev/null || true
    rm -rf "$dir"
    local ms=$((($(date +%s%N) - start) / 1000000))
    printf 'demo: cluster stopped and removed (%d.%03d s in all)\n' $((ms / 1000)) $((ms % 1000))
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

# Fake GPUs: device nodes (what the driver creates) and the fake NVML's view of them.
for m in 0 1; do mknod "$(root "$a")/dev/nvidia$m" c 195 "$m"; done
for m in 0 1 2 3; do mknod "$(root "$b")/dev/nvidia$m" c 195 "$m"; done

if [[ $mode == charms ]]; then
    cpus=$(seq -s, 0 $(($(nproc) - 1)))
    mkdir -p "$work/nvml"
    cp "$target/libfake_nvml.so" "$work/nvml/libnvidia-ml.so.1"
    echo '{"devices": []}' >"$work/nvml/$ctl.json"
    t4() { printf '{"name": "Tesla T4", "uuid": "GPU-7e540000-0000-4000-8000-00000000000%s", "pci_bus_id": "%s", "minor": %s, "memory_total": 16106127360, "cpu_affinity": [%s]}' "$1" "$2" "$1" "$cpus"; }
    printf '{"devices": [%s, %s]}\n' "$(t4 0 00000000:3B:00.0)" "$(t4 1 00000000:86:00.0)" >"$work/nvml/$a.json"
    buses=(00000000:18:00.0 00000000:2A:00.0 00000000:3A:00.0 00000000:5D:00.0)
    devs=()
    for i in 0 1 2 3; do
        links=()
        for j in 0 1 2 3; do
            [[ $j -ne $i ]] || continue
            for _ in 1 2 3 4 5 6; do links+=("\"${buses[j]}\""); done
        done
        devs+=("$(printf '{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1e0c0000-5d1c-4b3e-9f2a-00000000000%s", "pci_bus_id": "%s", "minor": %s, "memory_total": 85520809984, "cpu_affinity": [%s], "mig": {"current": 0}, "nvlinks": [%s]}' \
            "$i" "${buses[i]}" "$i" "$cpus" "$(IFS=,; echo "${links[*]}")")")
    done
    printf '{"devices": [%s]}\n' "$(IFS=,; echo "${devs[*]}")" >"$work/nvml/$b.json"
    for c in slurmd slurmctld; do
        d=$work/charm-$c
        mkdir -p "$d"
        if [[ $c == slurmd ]]; then y=$repo; else y=$repo/charm/slurmctld; fi
        cp "$y"/{metadata,config,actions}.yaml "$d/"
        cp "$target/slurm-charm" "$d/dispatch"
    done
    section() { printf '\n===== %s\n' "$1"; }
    section "juju-sim run tools/e2e/cluster.yaml"
    E2E_DIR=$dir E2E_WORK=$work E2E_BIN=$e2e/bin E2E_CLUSTER=$e2e/cluster \
        "$target/juju-sim" run "$e2e/cluster.yaml"
else
    # What the charms do, by hand: one munge key, the controller's configs, configless slurmd.
    for h in "$a" "$b"; do
        cp "$(root "$ctl")/etc/munge/munge.key" "$(root "$h")/etc/munge/munge.key"
        # owner set inside the host: a Debian root may number the munge user differently
        in_host "$h" sh -c 'chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key'
        printf 'SLURMD_OPTIONS="--conf-server %s:6817"\n' "$ctl" >"$(root "$h")/etc/default/slurmd"
        mkdir -p "$(root "$h")/etc/systemd/system/slurmd.service.d"
        printf '[Unit]\nConditionPathExists=\n' >"$(root "$h")/etc/systemd/system/slurmd.service.d/10-slurm-charms.conf"
    done
    cp "$repo"/tests/e2e/fixtures/{slurm,gres,cgroup}.conf "$(root "$ctl")/etc/slurm/"
    for h in "$ctl" "$a" "$b"; do in_host "$h" systemctl enable --now munge; done
    in_host "$ctl" systemctl enable --now slurmctld
    for h in "$a" "$b"; do
        in_host "$h" systemctl daemon-reload
        in_host "$h" systemctl enable --now slurmd
    done
fi
idle=0
for _ in $(seq 1 240); do
    # `idle` exactly: `sinfo -t idle` also lists `idle*` (not responding), which srun refuses.
    if [[ $(in_host "$ctl" sinfo -h -N -t idle -o '%T' 2>/dev/null | grep -cx idle) == 2 ]]; then
        idle=1
        break
    fi
    sleep 0.25
done

section() { printf '\n===== %s\n' "$1"; }
section "gres.conf ($ctl:/etc/slurm/gres.conf)"
cat "$(root "$ctl")/etc/slurm/gres.conf"
section "slurm.conf ($ctl:/etc/slurm/slurm.conf)"
cat "$(root "$ctl")/etc/slurm/slurm.conf"
section "sinfo"
in_host "$ctl" sinfo
section "sinfo -N -o '%N %T %G'"
in_host "$ctl" sinfo -N -o '%N %T %G'
if [[ $idle -ne 1 ]]; then
    section "the nodes did not become IDLE within 60 s"
    in_host "$ctl" scontrol show node || true
    exit 1
fi
section "srun --gres=gpu:tesla_t4:1 -w $a env | grep CUDA_VISIBLE_DEVICES"
in_host "$ctl" timeout 60 srun --gres=gpu:tesla_t4:1 -w "$a" env | grep CUDA_VISIBLE_DEVICES
section "srun --gres=gpu:nvidia_h100_80gb_hbm3:2 -w $b env | grep CUDA_VISIBLE_DEVICES"
in_host "$ctl" timeout 60 srun --gres=gpu:nvidia_h100_80gb_hbm3:2 -w "$b" env | grep CUDA_VISIBLE_DEVICES
