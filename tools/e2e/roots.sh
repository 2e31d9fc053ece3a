#!/usr/bin/env bash
# Prints the path of a Debian root holding Slurm of one Debian suite, building it when missing.
#
#   tools/e2e/roots.sh bookworm   -> /            (this machine: Debian 12, Slurm 22.05)
#   tools/e2e/roots.sh trixie     -> <cache>/trixie-<hash>   (Slurm 24.11)
#   tools/e2e/roots.sh sid        -> <cache>/sid-<hash>      (Slurm 26.05)
#
# Roots are built with mmdebstrap from Debian's registry (main + contrib, so Slurm's own NVML
# plugin `slurm-wlm-nvml-plugin` is there too) and cached outside the repository, in
# $SLURM_ROOTS_CACHE (default /var/cache/slurm-charms/roots). The directory name carries a hash
# of the suite, the package list and the options below, so changing any of them builds a new
# root; a root is moved into place only once complete, so an interrupted build is rebuilt.
set -euo pipefail
suite=${1:?usage: roots.sh bookworm|trixie|sid}
packages="slurmctld,slurmd,slurm-client,munge,slurm-wlm-nvml-plugin,iproute2,util-linux,mount,procps"
opts=(--variant=apt --components=main,contrib --include="$packages")
case $suite in
    bookworm) echo /; exit 0 ;;
    trixie) ;;
    # The registry's sid Release file can be past its Valid-Until date.
    sid) opts+=(--aptopt='Acquire::Check-Valid-Until "false"') ;;
    *) echo "roots.sh: unknown suite '$suite' (bookworm, trixie or sid)" >&2; exit 2 ;;
esac
cache=${SLURM_ROOTS_CACHE:-/var/cache/slurm-charms/roots}
hash=$(printf '%s\n' "$suite" "${opts[@]}" | sha256sum | cut -c1-12)
root="$cache/$suite-$hash"
if [[ -x $root/usr/sbin/slurmctld ]]; then echo "$root"; exit 0; fi
command -v mmdebstrap >/dev/null || { echo "roots.sh: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.lock"; flock 9
if [[ -x $root/usr/sbin/slurmctld ]]; then echo "$root"; exit 0; fi
tmp="$cache/.building-$suite-$hash"
rm -rf "$tmp"
echo "roots.sh: building the $suite root in $root (mmdebstrap, about 30 s)" >&2
mmdebstrap "${opts[@]}" "$suite" "$tmp" >&2
mv "$tmp" "$root"
echo "$root"
