#!/usr/bin/env bash
# Runs `slurmd -G` (print the GRES records slurmd ends up with, then exit) inside ROOT, a Debian
# root from tools/e2e/roots.sh (`/` is this machine), in a private mount namespace whose /dev,
# /proc/driver and /mnt are the test's: Slurm's NVML plugin reads the GPU device files and
# /proc/driver/nvidia-caps/mig-minors at fixed paths, so a namespace gives it those without
# touching the machine or the cached root. Used by tests/gpu_slurm_oracle.rs; needs root.
#
#   slurmd-g.sh ROOT WORK
#
# WORK holds what the run needs and is mounted at /mnt:
#   slurm.conf, gres.conf        read by slurmd (`-f /mnt/slurm.conf`; gres.conf beside it)
#   lib/                         the fake libnvidia-ml.so.1 (+ .so), first on LD_LIBRARY_PATH
#   fake.json                    its configuration ($FAKE_NVML_CONFIG)
#   devices                      lines `PATH MAJOR MINOR`: character devices created under /dev
#   mig-minors                   optional: becomes /proc/driver/nvidia-caps/mig-minors
# Prints slurmd's output (stderr and stdout) and exits with slurmd's status.
set -euo pipefail
root=${1:?usage: slurmd-g.sh ROOT WORK}
work=${2:?usage: slurmd-g.sh ROOT WORK}
[[ -x $root/usr/sbin/slurmd ]] || { echo "slurmd-g.sh: no slurmd in root '$root'" >&2; exit 2; }
[[ -f $work/slurm.conf ]] || { echo "slurmd-g.sh: no slurm.conf in '$work'" >&2; exit 2; }
exec unshare --mount --propagation private -- bash -euo pipefail -c '
root=$1 work=$2
target=${root%/}
if [[ -n $target ]]; then
    mount -t proc proc "$target/proc"
    mount --rbind /sys "$target/sys"
fi
mount -t tmpfs -o mode=755 none "$target/dev"
mknod -m 666 "$target/dev/null" c 1 3
mknod -m 666 "$target/dev/zero" c 1 5
mknod -m 666 "$target/dev/urandom" c 1 9
if [[ -f $work/devices ]]; then
    while read -r path major minor; do
        [[ -n $path ]] || continue
        mkdir -p "$(dirname "$target$path")"
        mknod -m 666 "$target$path" c "$major" "$minor"
    done < "$work/devices"
fi
mkdir -p "$target/proc/driver" 2>/dev/null || true
mount -t tmpfs -o mode=755 none "$target/proc/driver"
if [[ -f $work/mig-minors ]]; then
    mkdir -p "$target/proc/driver/nvidia-caps"
    cp "$work/mig-minors" "$target/proc/driver/nvidia-caps/mig-minors"
fi
mount --bind "$work" "$target/mnt"
exec chroot "${target:-/}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LD_LIBRARY_PATH=/mnt/lib FAKE_NVML_CONFIG=/mnt/fake.json \
    slurmd -G -N "${SLURMD_NODE:-gpunode}" -f /mnt/slurm.conf 2>&1
' slurmd-g "$root" "$work"
