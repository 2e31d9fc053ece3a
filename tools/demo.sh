#!/usr/bin/env bash
# The main job: the real slurmctld and slurmd charms, every hook run by the bundled Juju simulator,
# enlist fake GPU nodes.
# - As root where namespaces work: installs Debian's slurmctld, slurmd, slurm-client, munge and
#   iproute2 when missing (apt-get, non-interactive, saying so), builds what it needs, and runs a
#   real cluster (one controller host, two GPU hosts, each its own namespace) with real
#   slurmctld/slurmd/munged, shown with sinfo and srun, then removed (tools/e2e/demo.sh).
# - Otherwise (not root, no namespaces, packages not installable, or SLURM_CHARMS_DEMO=simulator): the same charms in the simulator alone (daemons replaced by recording fakes), and
#   the rendered slurm.conf and gres.conf printed (scenarios/gpu-cluster.yaml). It says why.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

why=""
if [[ ${SLURM_CHARMS_DEMO:-} == simulator ]]; then
    why="SLURM_CHARMS_DEMO=simulator asks for the simulator only"
elif [[ $(id -u) -ne 0 ]]; then
    why="not root (the real cluster needs namespaces, mounts and device nodes)"
else
    # As root, the demo installs what the real cluster needs from Debian's registry.
    missing=()
    for p in slurmctld:slurmctld slurmd:slurmd srun:slurm-client munged:munge ip:iproute2 \
        unshare:util-linux nsenter:util-linux setpriv:util-linux; do
        command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
        if command -v apt-get >/dev/null; then
            echo "demo: installing ${missing[*]} with apt-get (non-interactive; the real cluster needs them)" >&2
            export DEBIAN_FRONTEND=noninteractive
            if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
                why="apt-get could not install ${missing[*]}"
            fi
        else
            why="${missing[*]} missing and no apt-get to install them"
        fi
    fi
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
