#!/bin/sh
# Setup step of scenarios/gpu-cluster.yaml (run by its `sh` step with WORKDIR and BIN_DIR set):
# builds the charm binary and the fake NVML in the profile juju-sim was built with, and lays out
# under $WORKDIR the two charm directories, the fake NVML, recording stand-ins for the machine's
# commands (apt-get, systemctl, scontrol, sinfo, slurmd, slurmctld, nvidia-modprobe; each logs
# to <unit root>/commands.log) and one host root per unit with its fake GPUs.
set -eu
repo=${SLURM_CHARMS_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
case "$BIN_DIR" in
    */release) profile=--release ;;
    *) profile= ;;
esac
# Two builds: `--bin` would restrict the whole invocation to binaries, and the fake NVML is a
# library (cdylib); built together, libfake_nvml.so is never produced from a clean target dir.
(cd "$repo" && cargo build $profile --locked -p slurm-charms --bin slurm-charm) >&2
(cd "$repo" && cargo build $profile --locked -p fake-nvml) >&2
target=$BIN_DIR
CLUSTER_DIR=$WORKDIR

. "$repo/scenarios/lib.sh"

# Charm directories around the one binary.
charm_dirs "$repo" "$target/slurm-charm" "$CLUSTER_DIR/charms"

# The fake NVML, found by dlopen("libnvidia-ml.so.1") through LD_LIBRARY_PATH.
mkdir -p "$CLUSTER_DIR/nvml"
cp "$target/libfake_nvml.so" "$CLUSTER_DIR/nvml/libnvidia-ml.so.1"

# Stand-ins for the machine's commands: each logs its command line to <root>/commands.log.
mkdir -p "$CLUSTER_DIR/bin"
cat > "$CLUSTER_DIR/bin/stand-in" <<'FAKE'
#!/bin/sh
mkdir -p "$SLURM_CHARMS_ROOT"
name=$(basename "$0")
echo "$name $*" >> "$SLURM_CHARMS_ROOT/commands.log"
case "$name $1" in
  "slurmd -C") echo "NodeName=$(basename "$SLURM_CHARMS_ROOT") CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=2 RealMemory=515000"; echo "UpTime=0-01:00:00" ;;
  "slurmd -V"|"slurmctld -V") echo "slurm-wlm 22.05.8" ;;
esac
exit 0
FAKE
chmod 0755 "$CLUSTER_DIR/bin/stand-in"
link_stand_ins "$CLUSTER_DIR/bin"

# Host roots and GPUs: gpu-node-0 has 8 H100s, gpu-node-1 4 A100s + 2 L40S, gpu-node-2 2 T4s.
gpus() { # unit-dir name minor bus ...
    root=$CLUSTER_DIR/units/$1; shift
    mkdir -p "$root/dev"
    printf '{"driver_version":"550.54.15","cuda_driver_version":12040,"devices":[' > "$root/nvml.json"
    sep=
    while [ $# -ge 3 ]; do
        name=$(printf '%s' "$1" | tr + ' ')
        printf '%s{"name":"%s","uuid":"GPU-%08x-0000-4000-8000-%012x","pci_bus_id":"%s","minor":%s,"memory_total":85899345920}' \
            "$sep" "$name" "$2" "$(printf '%s' "$root" | cksum | cut -d' ' -f1)" "$3" "$2" >> "$root/nvml.json"
        : > "$root/dev/nvidia$2"
        sep=,
        shift 3
    done
    printf ']}\n' >> "$root/nvml.json"
}
h=""; for i in 0 1 2 3 4 5 6 7; do h="$h NVIDIA+H100+80GB+HBM3 $i 00000000:$(printf %02X $((24 + i * 16))):00.0"; done
# (GPU names are passed with + for spaces)
gpus gpu-node-0 $h
gpus gpu-node-1 NVIDIA+A100-SXM4-80GB 0 00000000:07:00.0 NVIDIA+A100-SXM4-80GB 1 00000000:0F:00.0 \
    NVIDIA+A100-SXM4-80GB 2 00000000:47:00.0 NVIDIA+A100-SXM4-80GB 3 00000000:4E:00.0 \
    NVIDIA+L40S 4 00000000:87:00.0 NVIDIA+L40S 5 00000000:90:00.0
gpus gpu-node-2 Tesla+T4 0 00000000:3B:00.0 Tesla+T4 1 00000000:D8:00.0
mkdir -p "$CLUSTER_DIR/units/slurmctld-0"
echo '{"devices":[]}' > "$CLUSTER_DIR/units/slurmctld-0/nvml.json"
# Host names as the charms see them (<root>/proc/sys/kernel/hostname).
for u in slurmctld-0 gpu-node-0 gpu-node-1 gpu-node-2; do
    mkdir -p "$CLUSTER_DIR/units/$u/proc/sys/kernel"
    echo "$u" > "$CLUSTER_DIR/units/$u/proc/sys/kernel/hostname"
done
