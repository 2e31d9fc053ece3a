#!/usr/bin/env bash
# The main job: the real slurmctld and slurmd charms, every hook run by the bundled Juju simulator,
# enlist fake GPU nodes.
# - Where Debian's Slurm and munge are installed and this is root with namespaces: a real cluster
#   (one controller host, two GPU hosts, each its own namespace) run by real slurmctld/slurmd/munged,
#   shown with sinfo and srun, then removed (tools/e2e/demo.sh).
# - Otherwise: the same charms in the simulator alone (daemons replaced by recording fakes), and
#   the rendered slurm.conf and gres.conf printed (scenarios/gpu-cluster.yaml). It says why.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

why=""
if [[ $(id -u) -ne 0 ]]; then
    why="not root"
else
    for p in slurmctld slurmd munged srun sinfo scontrol unshare nsenter ip; do
        command -v "$p" >/dev/null || { why="$p is not installed (apt-get install slurmctld slurmd slurm-client munge iproute2)"; break; }
    done
    if [[ -z $why ]] && ! unshare --uts --mount --net --pid --cgroup --fork -- true 2>/dev/null; then
        why="this machine does not allow creating namespaces"
    fi
fi

if [[ -z $why ]]; then
    exec bash "$repo/tools/e2e/demo.sh"
fi
cat >&2 <<MSG
######################################################################################
# demo: NOT running real Slurm: $why.
# Running the charms in the Juju simulator only; daemons are recording fakes.
######################################################################################
MSG
cd "$repo"
exec cargo run --release -q -p juju-sim -- run scenarios/gpu-cluster.yaml
