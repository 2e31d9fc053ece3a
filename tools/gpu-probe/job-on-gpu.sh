#!/usr/bin/env bash
# A real Slurm cluster of one node on a machine with real NVIDIA GPUs, configured with the files
# our charms write for it, and jobs asking for its GPUs (docs/real-gpu.md, "Jobs on the real
# GPU"). Run as root after tools/gpu-probe/capture.sh, which recorded REC (its rec/ directory):
#
#   tools/gpu-probe/job-on-gpu.sh CARRY REC
#
# CARRY holds `cluster.tar.xz`, a Debian root with slurmctld, slurmd, slurm-client and munge
# (tools/gpu-probe/slim-root.sh trixie DIR cluster). The node line and gres.conf are the ones
# `gpu-probe record` made for this machine (`trixie-record.json`); the rest of slurm.conf is the
# minimum a one-host cluster needs (munge, cgroups left alone: no systemd here). Writes
# REC/jobs-trixie.txt: sinfo, scontrol show node, and each job's output.
set -uo pipefail
carry=$(realpath "${1:?usage: job-on-gpu.sh CARRY REC}")
rec=$(realpath "${2:?usage: job-on-gpu.sh CARRY REC}")
root=/tmp/roots/cluster
mkdir -p "$root"
# CLUSTER_ROOT: another tarball of such a root (capture.sh can use the same root as its trixie
# one, which saves carrying a second copy).
tar -xJf "${CLUSTER_ROOT:-$carry/cluster.tar.xz}" -C "$root" || { echo "cannot unpack the cluster root"; exit 1; }
. "$(dirname "$0")/common.sh"
lib=$(nvml_lib)
[[ -n $lib ]] || { echo "no libnvidia-ml.so.1 on this machine" >&2; exit 1; }
export LD_LIBRARY_PATH=$(dirname "$lib")   # for gpu-probe, as in capture.sh
enter_root "$root" "$lib"
mkdir -p "$root/mnt/bin" "$root/run/munge" "$root/var/spool/slurmd" \
    "$root/var/spool/slurmctld" "$root/var/log/slurm" "$root/etc/slurm"
cp -L "$(command -v nvidia-smi)" "$root/mnt/bin/" 2>/dev/null
# Writes slurm.conf, gres.conf and cgroup.conf from a JSON object with our `node_line` and
# `gres_conf` (`gpu-probe record` or `gpu-probe files`); GresTypes names what gres.conf uses.
write_conf() {
    python3 - "$1" "$root/etc/slurm" <<'EOF'
import json, sys
rec = json.load(open(sys.argv[1]))
node = rec["node_line"].split()[0].split("=", 1)[1]
d = sys.argv[2]
types = ["gpu"] + [t for t in ("shard", "mps") if f"Name={t} " in rec["gres_conf"]]
open(f"{d}/slurm.conf", "w").write(f"""ClusterName=realgpu
SlurmctldHost={node}
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
GresTypes={",".join(types)}
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
{rec["node_line"]}
PartitionName=gpu Nodes=ALL Default=YES State=UP
""")
open(f"{d}/gres.conf", "w").write(rec["gres_conf"] + "\n")
open(f"{d}/cgroup.conf", "w").write("CgroupPlugin=disabled\n")
open(f"{d}/../hosts", "w").write(f"127.0.0.1 localhost {node}\n")
EOF
}
write_conf "$rec/trixie-record.json"
# The node's GPU type and count, as detect-gpus reported them (gres `gpu:<type>:<n>`).
read -r gtype gcount < <(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["detect_gpus"]["gres"].split(",")[0].split(":"); print(g[1], g[2])' "$rec/trixie-record.json")
in_root() { chroot "$root" env -i PATH=/mnt/bin:/usr/sbin:/usr/bin:/sbin:/bin LD_LIBRARY_PATH=/mnt/lib "$@"; }
wait_idle() {
    for _ in $(seq 60); do
        in_root sinfo -h -o %T 2>/dev/null | grep -q idle && return
        sleep 1
    done
}
{
    echo "== slurm.conf"; cat "$root/etc/slurm/slurm.conf"
    echo "== gres.conf"; cat "$root/etc/slurm/gres.conf"
    dd if=/dev/urandom of="$root/etc/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 0400 "$root/etc/munge/munge.key"
    chroot "$root" chown -R munge: /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null
    chroot --userspec=munge:munge "$root" env -i PATH=/usr/sbin:/usr/bin munged
    in_root slurmctld -i
    in_root slurmd
    wait_idle
    echo "== sinfo"; in_root sinfo -o "%N %G %T"
    echo "== scontrol show node"; in_root scontrol show node
    echo "== srun --gres=gpu:1"
    in_root timeout 60 srun --gres=gpu:1 bash -c 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS=$SLURM_JOB_GPUS; nvidia-smi -L'
    echo "exit status: $?"
    echo "== srun --gres=gpu:$gtype:$gcount (all of them, by type)"
    in_root timeout 60 srun --gres=gpu:$gtype:$gcount bash -c 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES'
    echo "exit status: $?"
    echo "== srun --constraint=$gtype (the node's GPU feature)"
    in_root timeout 60 srun --constraint="$gtype" hostname
    echo "exit status: $?"
    echo "== srun --constraint=not_a_gpu_here (a feature no node has)"
    in_root timeout 60 srun --constraint=not_a_gpu_here hostname
    echo "exit status: $?"
    echo "== srun --gres=gpu:$((gcount + 1)) (more than the node has)"
    in_root timeout 60 srun --gres=gpu:$((gcount + 1)) true
    echo "exit status: $?"
    # GPU sharing (`gpu-sharing=shard:4`): the charm's shard records, two jobs on one GPU at once.
    "$carry/gpu-probe" files "$rec/trixie-slurmd-C.txt" shard:4 > "$rec/trixie-files-shard.json"
    write_conf "$rec/trixie-files-shard.json"
    in_root scontrol shutdown
    sleep 3
    echo "== shard slurm.conf"; cat "$root/etc/slurm/slurm.conf"
    echo "== shard gres.conf"; cat "$root/etc/slurm/gres.conf"
    in_root slurmctld
    in_root slurmd
    wait_idle
    for _ in $(seq 30); do
        in_root sinfo -h -o %G | grep -q shard && break
        sleep 1
    done
    echo "== shard sinfo"; in_root sinfo -o "%N %G %T"
    echo "== two srun --gres=shard:1 at once (each --mem=1G -c 1, so memory does not serialize them)"
    for _ in 1 2; do
        in_root timeout 60 srun --gres=shard:1 --mem=1G -c 1 bash -c 'echo "job $SLURM_JOB_ID start $(date +%s.%N) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; sleep 4; echo "job $SLURM_JOB_ID end $(date +%s.%N)"' &
    done
    wait
    echo "== logs"; grep -iE "error|warn|fatal" "$root"/var/log/slurm/*.log
    in_root scontrol shutdown
    sleep 2
} > "$rec/jobs-trixie.txt" 2>&1
pkill -f munged
leave_root "$root"
cat "$rec/jobs-trixie.txt"
