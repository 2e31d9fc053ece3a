# Functions shared by capture.sh and job-on-gpu.sh (sourced, bash).

# The machine's libnvidia-ml.so.1, or $NVML_LIB (a rehearsal with tools/fake-nvml, whose
# configuration is then read from "$NVML_LIB.json" beside it). Prints nothing when there is none.
nvml_lib() {
    local lib=${NVML_LIB:-$(ldconfig -p | awk '/libnvidia-ml\.so\.1 /{print $NF; exit}')}
    [[ -n $lib ]] || lib=$(find / -xdev -name 'libnvidia-ml.so.1' 2>/dev/null | head -1)
    printf '%s' "$lib"
}

# enter_root ROOT LIB: the machine's /proc, /sys and /dev in the unpacked Debian root ROOT, and
# the NVML library LIB at ROOT/mnt/lib as libnvidia-ml.so.1 and libnvidia-ml.so (Slurm 24.11+
# dlopen the unversioned name), with a rehearsal fake's configuration beside both.
enter_root() {
    local root=$1 lib=$2
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mkdir -p "$root/mnt/lib"
    cp -L "$lib" "$root/mnt/lib/libnvidia-ml.so.1"
    if [[ -f $lib.json ]]; then
        cp "$lib.json" "$root/mnt/lib/libnvidia-ml.so.1.json"
        cp "$lib.json" "$root/mnt/lib/libnvidia-ml.so.json"
    fi
    ln -sf libnvidia-ml.so.1 "$root/mnt/lib/libnvidia-ml.so"
}

# leave_root ROOT: undoes enter_root's mounts.
leave_root() {
    umount -R "$1/dev" "$1/sys" "$1/proc" 2>/dev/null
}
