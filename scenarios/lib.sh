# Shell functions shared by the scenarios' setup steps (sourced, POSIX sh).

# charm_dirs REPO BINARY DIR: DIR/slurmd and DIR/slurmctld, each holding its charm's
# metadata.yaml, config.yaml and actions.yaml around BINARY as its `dispatch` (the one binary is
# both charms, as charm/pack.sh packs it).
charm_dirs() {
    for charm in slurmd slurmctld; do
        d=$3/$charm
        mkdir -p "$d"
        yaml=$1; [ "$charm" = slurmctld ] && yaml=$1/charm/slurmctld
        cp "$yaml/metadata.yaml" "$yaml/config.yaml" "$yaml/actions.yaml" "$d/"
        ln -s "$2" "$d/dispatch"
    done
}

# link_stand_ins DIR: the machine's commands the charms run (apt-get, systemctl, Slurm's,
# nvidia-modprobe) as links to DIR/stand-in.
link_stand_ins() {
    for c in apt-get systemctl scontrol sinfo slurmd slurmctld nvidia-modprobe; do
        ln -s stand-in "$1/$c"
    done
}
