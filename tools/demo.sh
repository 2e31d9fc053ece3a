#!/usr/bin/env bash
# The main job: the real slurmctld and slurmd charms, every hook run by the bundled Juju simulator,
# enlist fake GPU nodes.
# - As root where namespaces work: installs Debian's slurmctld, slurmd, slurm-client, munge and
#   iproute2 when missing (apt-get, non-interactive, saying so), builds what it needs, and runs a
#   real cluster (one controller host, two GPU hosts, each its own namespace) with real
#   slurmctld/slurmd/munged, shown with sinfo and srun, then removed (tools/e2e/demo.sh).
# - Otherwise (not root, no namespaces, packages not installable, or SLURM_CHARMS_DEMO=simulator):
#   the same charms in the simulator alone (daemons replaced by recording fakes), and the rendered
#   slurm.conf and gres.conf printed (scenarios/gpu-cluster.yaml). It says why.
#
# SLURM_CHARMS_DEMO selects the mode:
#   (unset)    the real cluster where this machine allows it, else the simulator (loudly)
#   real       the real cluster or a failure: no fallback, exit status 1 and the reason (CI)
#   simulator  the simulator only
# E2E_REQUIRED=1 (set by .ci/run) means `real` unless SLURM_CHARMS_DEMO=simulator asks otherwise.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

mode=${SLURM_CHARMS_DEMO:-}
case $mode in
    "" | real | simulator) ;;
    *)
        echo "demo: SLURM_CHARMS_DEMO=$mode is not a mode (real, simulator, or unset)" >&2
        exit 2
        ;;
esac
if [[ -z $mode && -n ${E2E_REQUIRED:-} && ${E2E_REQUIRED} != 0 ]]; then
    mode=real
fi

# Debian installs the daemons in /usr/sbin, which a root shell may not have on PATH (the real
# demo, tools/e2e/demo.sh, looks them up on PATH too).
for d in /usr/sbin /sbin; do
    [[ :$PATH: == *:$d:* ]] || PATH=$PATH:$d
done
export PATH

# The commands the real cluster needs, as command:Debian-package.
needs=(slurmctld:slurmctld slurmd:slurmd srun:slurm-client sinfo:slurm-client scontrol:slurm-client
    munged:munge ip:iproute2 unshare:util-linux nsenter:util-linux setpriv:util-linux)
missing_packages() {
    local p
    for p in "${needs[@]}"; do
        command -v "${p%%:*}" >/dev/null || echo "${p#*:}"
    done | sort -u
}

why=""
if [[ $mode == simulator ]]; then
    why="SLURM_CHARMS_DEMO=simulator asks for the simulator only"
elif [[ $(id -u) -ne 0 ]]; then
    why="not root (the real cluster needs namespaces, mounts and device nodes)"
else
    # As root, the demo installs what the real cluster needs from Debian's registry.
    mapfile -t missing < <(missing_packages)
    if [[ ${#missing[@]} -gt 0 ]]; then
        if command -v apt-get >/dev/null; then
            echo "demo: installing ${missing[*]} with apt-get (non-interactive; the real cluster needs them)" >&2
            export DEBIAN_FRONTEND=noninteractive
            if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
                why="apt-get could not install ${missing[*]}"
            else
                mapfile -t still < <(missing_packages)
                if [[ ${#still[@]} -gt 0 ]]; then
                    why="apt-get installed ${missing[*]} but the commands of ${still[*]} are still not on PATH ($PATH)"
                fi
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
    # Its exit status is the demo's: a real cluster that fails fails the demo.
    exec bash "$repo/tools/e2e/demo.sh"
fi
if [[ $mode == real ]]; then
    if [[ -n ${SLURM_CHARMS_DEMO:-} ]]; then
        asked="SLURM_CHARMS_DEMO=real"
    else
        asked="E2E_REQUIRED=$E2E_REQUIRED"
    fi
    cat >&2 <<MSG
######################################################################################
# demo: FAILED: the real Slurm cluster cannot run: $why.
# $asked requires the real cluster, so there is no fallback to the simulator.
######################################################################################
MSG
    exit 1
fi
cat >&2 <<MSG
######################################################################################
# demo: NOT running real Slurm: $why.
# Running the charms in the Juju simulator only; daemons are recording fakes.
######################################################################################
MSG
cd "$repo"
exec cargo run --release -q -p juju-sim -- run scenarios/gpu-cluster.yaml
