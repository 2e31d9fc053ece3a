#!/bin/sh
# Setup step of scenarios/real-gpu.yaml (WORKDIR and BIN_DIR set by juju-sim): the charm binary
# is taken from BIN_DIR as built (nothing is built: a GPU machine may have no Rust), the slurmd
# unit's host root links to the machine's /sys, /dev and /proc/driver so the charm reads the real
# GPUs, CPU topology and nvidia-caps, and Slurm's commands are recording stand-ins. `slurmd -C`
# answers with $REAL_SLURMD_C (a file holding real `slurmd -C` output, as capture.sh records it)
# or, without it, a line made from nproc.
set -eu
repo=${SLURM_CHARMS_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
[ -x "$BIN_DIR/slurm-charm" ] || { echo "setup-real-gpu.sh: no $BIN_DIR/slurm-charm (cargo build --release)" >&2; exit 1; }
. "$repo/scenarios/lib.sh"
charm_dirs "$repo" "$BIN_DIR/slurm-charm" "$WORKDIR/charms"
# The NVML library the slurmd unit opens: the machine's, or $NVML_LIB (a rehearsal with
# tools/fake-nvml, its configuration in "$NVML_LIB.json").
mkdir -p "$WORKDIR/nvml"
lib=${NVML_LIB:-$(ldconfig -p | awk '/libnvidia-ml\.so\.1 /{print $NF; exit}')}
[ -n "$lib" ] || { echo "setup-real-gpu.sh: no libnvidia-ml.so.1 on this machine" >&2; exit 1; }
ln -s "$lib" "$WORKDIR/nvml/libnvidia-ml.so.1"
if [ -f "$lib.json" ]; then cp "$lib.json" "$WORKDIR/nvml/libnvidia-ml.so.1.json"; fi
facts=$WORKDIR/slurmd-C.txt
if [ -n "${REAL_SLURMD_C:-}" ]; then
    cp "$REAL_SLURMD_C" "$facts"
else
    n=$(nproc)
    printf 'NodeName=gpu-0 CPUs=%s Boards=1 SocketsPerBoard=1 CoresPerSocket=%s ThreadsPerCore=1 RealMemory=1000\n' "$n" "$n" > "$facts"
fi
mkdir -p "$WORKDIR/bin"
cat > "$WORKDIR/bin/stand-in" <<FAKE
#!/bin/sh
mkdir -p "\$SLURM_CHARMS_ROOT"
name=\$(basename "\$0")
echo "\$name \$*" >> "\$SLURM_CHARMS_ROOT/commands.log"
case "\$name \$1" in
  "slurmd -C") cat "$facts" ;;
  "slurmd -V"|"slurmctld -V") echo "slurm-wlm 24.11.5" ;;
esac
exit 0
FAKE
chmod 0755 "$WORKDIR/bin/stand-in"
link_stand_ins "$WORKDIR/bin"
node=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' "$facts" | head -1)
for u in slurmctld-0 gpu-0; do
    mkdir -p "$WORKDIR/units/$u/proc/sys/kernel"
done
echo slurmctld-0 > "$WORKDIR/units/slurmctld-0/proc/sys/kernel/hostname"
echo "$node" > "$WORKDIR/units/gpu-0/proc/sys/kernel/hostname"
ln -s /sys "$WORKDIR/units/gpu-0/sys"
ln -s /dev "$WORKDIR/units/gpu-0/dev"
ln -s /proc/driver "$WORKDIR/units/gpu-0/proc/driver"
