#!/usr/bin/env bash
# Records a machine with real NVIDIA GPUs for tests/gpu_real_hardware.rs (docs/real-gpu.md).
# Run as root on that machine, once; it mounts only under /tmp/roots, and without systemd it enables
# the kernel's cgroup controllers for a /sys/fs/cgroup/system.slice (see below):
#
#   tools/gpu-probe/capture.sh CARRY OUT
#
# CARRY holds what the machine lacks: `gpu-probe` (cargo build --release -p gpu-probe), optionally
# `juju-sim`, `jujuc` and `slurm-charm` (cargo build --release -p juju-sim -p slurm-charms), and Debian
# roots with slurmd and Slurm's NVML plugin, `<suite>.tar.xz` for suites bookworm (22.05),
# trixie (24.11), sid (26.05), made by tools/gpu-probe/slim-root.sh. Writes OUT/capture.tar.gz
# holding rec/:
#   machine.txt                uname, os-release, lscpu, nvidia-smi (-q, topo), /dev/nvidia*, …
#   nvml.json, nvml-notes.txt  the real NVML as a fake-nvml configuration (gpu-probe nvml-fixture)
#   host/                      the CPU topology files the charm reads (core ids for Cores=)
#   <suite>-slurmd-C.txt       slurmd -C in that root
#   <suite>-record.json        gpu-probe record: detect-gpus results, features, our node line and
#                              gres.conf for that slurmd -C line
#   <suite>-names.txt          slurmd -G, AutoDetect=nvml, Gres= of a type matching nothing
#                              (Slurm prints every GPU it detected, with its own type)
#   <suite>-autodetect.txt     slurmd -G, AutoDetect=nvml, Gres= from those types
#   <suite>-ours.txt           slurmd -G on our node line and gres.conf, no AutoDetect
#   juju-sim-<suite>.txt       the charms in the simulator on this machine (scenarios/real-gpu.yaml):
#                              detect-gpus, status, the controller's files (when CARRY has
#                              juju-sim, jujuc and slurm-charm)
set -uo pipefail
carry=$(realpath "${1:?usage: capture.sh CARRY OUT}")
out=$(realpath "${2:?usage: capture.sh CARRY OUT}")
rec=$out/rec
mkdir -p "$rec"

{
    set -x
    uname -a; cat /etc/os-release; nproc; lscpu
    nvidia-smi; nvidia-smi -q; nvidia-smi topo -m; nvidia-smi nvlink -s
    ls -l /dev/nvidia* /dev/nvidia-caps
    cat /proc/driver/nvidia/version
    ls -R /proc/driver/nvidia | head -50
    cat /proc/driver/nvidia-caps/mig-minors | head -20
    ldconfig -p | grep -i nvidia-ml
    set +x
} > "$rec/machine.txt" 2>&1

# Slurm's cgroup/v2 plugin (IgnoreSystemd=yes below) makes its scope in /sys/fs/cgroup/system.slice
# and wants the controllers delegated down to it, as systemd arranges on a normal host; this
# machine may have no systemd, so the slice is made here with what the kernel offers.
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    echo "cgroup controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
    mkdir -p /sys/fs/cgroup/system.slice
    for dir in /sys/fs/cgroup /sys/fs/cgroup/system.slice; do
        for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
            echo "+$c" > "$dir/cgroup.subtree_control" 2>/dev/null || echo "cannot enable $c in $dir"
        done
        echo "$dir subtree_control: $(cat "$dir/cgroup.subtree_control")"
    done
fi

. "$(dirname "$0")/common.sh"
lib=$(nvml_lib)
echo "NVML library: ${lib:-none}"
[[ -n $lib ]] || { echo "no libnvidia-ml.so.1 on this machine" >&2; exit 1; }
export LD_LIBRARY_PATH=$(dirname "$lib")

"$carry/gpu-probe" nvml-fixture > "$rec/nvml.json" 2> "$rec/nvml-notes.txt"
echo "nvml-fixture: rc $?"; cat "$rec/nvml-notes.txt"

# The topology the charm maps NVML's CPU affinity through (src/gpu/host.rs cpu_to_core).
for d in /sys/devices/system/cpu/cpu[0-9]*; do
    t=$rec/host/sys/devices/system/cpu/$(basename "$d")/topology
    mkdir -p "$t"
    for f in core_id physical_package_id thread_siblings_list; do
        cp "$d/topology/$f" "$t/" 2>/dev/null
    done
done
cp /sys/devices/system/cpu/online "$rec/host/sys/devices/system/cpu/" 2>/dev/null
if [[ -r /proc/driver/nvidia-caps/mig-minors ]]; then
    mkdir -p "$rec/host/proc/driver/nvidia-caps"
    cp /proc/driver/nvidia-caps/mig-minors "$rec/host/proc/driver/nvidia-caps/"
fi

# `slurmd -G` inside ROOT on /mnt/slurm.conf with node line $2 and gres.conf $3.
slurmd_g() {
    local root=$1 node_line=$2 gres=$3 node
    node=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<< "$node_line")
    cat > "$root/mnt/slurm.conf" <<EOF
ClusterName=oracle
SlurmctldHost=localhost
AuthType=auth/none
GresTypes=gpu
SelectType=select/cons_tres
SlurmdSpoolDir=/mnt/spool
SlurmdPidFile=/mnt/slurmd.pid
$node_line
PartitionName=oracle Nodes=ALL Default=YES
EOF
    printf '%s' "$gres" > "$root/mnt/gres.conf"
    # A machine with cgroup v2 and no systemd/dbus (a VM, a chroot): `slurmd -G` must not ask
    # systemd for a scope (22.05 exits 1 silently, 24.11+ stop with "systemd scope for
    # slurmstepd could not be set"). 23.02+ can leave cgroups alone; 22.05 makes its scope
    # itself in the slice made above.
    if [[ $suite == bookworm ]]; then
        printf 'IgnoreSystemd=yes\n' > "$root/mnt/cgroup.conf"
    else
        printf 'CgroupPlugin=disabled\n' > "$root/mnt/cgroup.conf"
    fi
    timeout 120 chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        LD_LIBRARY_PATH=/mnt/lib slurmd -G -N "$node" -f /mnt/slurm.conf 2>&1
    local rc=$?
    echo "exit status: $rc"
    # Each run starts from the same cgroups: the scope slurmd made goes (it is empty now).
    find /sys/fs/cgroup/system.slice -depth -mindepth 1 -type d -path '*slurmstepd.scope*' \
        -exec rmdir {} + 2>/dev/null
    if [[ $rc != 0 ]]; then
        echo "--- again, verbose, in the foreground (diagnosis only):"
        timeout 120 chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
            LD_LIBRARY_PATH=/mnt/lib slurmd -D -vvvv -G -N "$node" -f /mnt/slurm.conf 2>&1 | tail -n 40
    fi
}

for suite in bookworm trixie sid; do
    tarball=$carry/$suite.tar.xz
    [[ -f $tarball ]] || { echo "no $tarball; $suite skipped"; continue; }
    root=/tmp/roots/$suite
    mkdir -p "$root"
    tar -xJf "$tarball" -C "$root" || { echo "$suite: cannot unpack"; continue; }
    enter_root "$root" "$lib"
    mkdir -p "$root/mnt/spool"
    chroot "$root" slurmd -V > "$rec/$suite-version.txt" 2>&1
    chroot "$root" slurmd -C > "$rec/$suite-slurmd-C.txt" 2>&1
    echo "$suite: $(cat "$rec/$suite-version.txt")"
    # From 24.11 `slurmd -C` autodetects GPUs itself and adds a Gres= of its own.
    facts=$(grep '^NodeName=' "$rec/$suite-slurmd-C.txt" | head -1 | sed 's/ Gres=[^ ]*//')
    "$carry/gpu-probe" record "$rec/$suite-slurmd-C.txt" > "$rec/$suite-record.json" \
        2> "$rec/$suite-record-stderr.txt"
    echo "$suite record: rc $?"
    gpus=$(python3 -c 'import json,sys; print(max(1, len(json.load(open(sys.argv[1]))["devices"])))' "$rec/nvml.json")
    slurmd_g "$root" "$facts Gres=gpu:oracle_unmatched_type:$gpus" $'AutoDetect=nvml\n' \
        > "$rec/$suite-names.txt"
    # Gres= from the types Slurm printed, in order of first appearance, with their counts.
    gres=$(python3 - "$rec/$suite-names.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().split("autodetected GPUs are being ignored:", 1)
counts = {}
for t in re.findall(r"GRES\[gpu\] Type:(\S+)", text[1] if len(text) > 1 else ""):
    counts[t] = counts.get(t, 0) + 1
print(",".join(f"gpu:{t}:{n}" for t, n in counts.items()))
EOF
)
    echo "$suite: Slurm's types: $gres"
    slurmd_g "$root" "$facts Gres=$gres" $'AutoDetect=nvml\n' > "$rec/$suite-autodetect.txt"
    node_line=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["node_line"])' "$rec/$suite-record.json")
    gres_conf=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gres_conf"])' "$rec/$suite-record.json")
    slurmd_g "$root" "$node_line" "$gres_conf"$'\n' > "$rec/$suite-ours.txt"
    tail -n 3 "$rec/$suite-autodetect.txt" "$rec/$suite-ours.txt"
    leave_root "$root"
done
# The charm binary itself, as `juju run gpu/0 detect-gpus` runs it: the simulator with the
# machine's GPUs (scenarios/real-gpu.yaml), when CARRY has juju-sim, jujuc and slurm-charm.
repo=$(cd "$(dirname "$0")/../.." && pwd)
for suite in trixie sid bookworm; do
    [[ -x $carry/juju-sim && -s $rec/$suite-slurmd-C.txt ]] || continue
    NVML_LIB=$lib REAL_SLURMD_C=$rec/$suite-slurmd-C.txt \
        "$carry/juju-sim" run "$repo/scenarios/real-gpu.yaml" > "$rec/juju-sim-$suite.txt" 2>&1
    echo "juju-sim ($suite slurmd -C): rc $?"
    tail -n 8 "$rec/juju-sim-$suite.txt"
    break
done

tar -czf "$out/capture.tar.gz" -C "$out" rec
ls -la "$out"
