#!/usr/bin/env bash
# Builds a small Debian root holding slurmd and Slurm's NVML plugin for one suite, as
# OUT_DIR/<suite>.tar.xz, for tools/gpu-probe/capture.sh to carry to a GPU machine (whose
# transfer limit is 64 MiB): mmdebstrap's essential variant, without documentation, perl,
# systemd's own binaries and apt's caches, which `slurmd -C` / `slurmd -G` never touch.
#
#   tools/gpu-probe/slim-root.sh bookworm|trixie|sid OUT_DIR [cluster]
#
# With `cluster` the root also holds slurmctld, slurm-client and munge, for
# tools/gpu-probe/job-on-gpu.sh, and is written as OUT_DIR/cluster.tar.xz.
set -euo pipefail
suite=${1:?usage: slim-root.sh SUITE OUT_DIR [cluster]}
out=$(realpath "${2:?usage: slim-root.sh SUITE OUT_DIR [cluster]}")
name=$suite extra=
if [[ ${3:-} == cluster ]]; then
    name=cluster extra=slurmctld,slurm-client,munge,
fi
# Bookworm's plugin cannot be installed beside bookworm's slurmd (it wants exactly deb12u2 of
# the basic plugins and libnvidia-ml1 from non-free): its gpu_nvml.so is copied in from
# tools/gpu-oracle/plugin-dir.sh's extraction instead, as the 22.05 oracle uses it.
plugin=slurm-wlm-nvml-plugin,
[[ $suite == bookworm ]] && plugin=
opts=(--variant=essential --components=main,contrib
      --include=${extra}${plugin}slurmd
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*')
[[ $suite == sid ]] && opts+=(--aptopt='Acquire::Check-Valid-Until "false"')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mmdebstrap "${opts[@]}" "$suite" "$tmp/root" >&2
if [[ $suite == bookworm ]]; then
    plugins=$(dirname "$0")/../gpu-oracle/plugin-dir.sh
    cp -L "$("$plugins")/gpu_nvml.so" "$tmp/root/usr/lib/x86_64-linux-gnu/slurm-wlm/"
fi
cd "$tmp/root"
rm -rf usr/share/perl* usr/bin/perl* usr/lib/x86_64-linux-gnu/perl* usr/lib/systemd \
    usr/lib/x86_64-linux-gnu/systemd usr/bin/systemd* usr/lib/x86_64-linux-gnu/gconv \
    var/cache/* var/lib/apt/lists/* var/lib/dpkg/info usr/share/zoneinfo usr/share/i18n \
    usr/share/common-licenses usr/lib/x86_64-linux-gnu/libze_*
chroot . slurmd -V >&2
tar -cf - . | xz -9 -T2 > "$out/$name.tar.xz"
ls -la "$out/$name.tar.xz" >&2
