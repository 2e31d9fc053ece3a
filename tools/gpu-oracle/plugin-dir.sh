#!/usr/bin/env bash
# Prints a Slurm PluginDir for this machine's Slurm 22.05 (Debian 12) that also holds Slurm's own
# NVML plugin, gpu_nvml.so, from Debian's contrib package slurm-wlm-nvml-plugin.
#
# The package cannot be installed here: it depends on exactly slurm-wlm-basic-plugins
# 22.05.8-4+deb12u2, and the machine has deb12u3 (the plugin's ABI is that of 22.05.8 either way:
# Slurm checks plugin_version = SLURM_VERSION_NUMBER). So the .deb is downloaded with a private
# apt configuration (bookworm contrib; the machine's own sources are not touched), extracted, and
# a directory is made with gpu_nvml.so plus links to every installed plugin.
#
# Cached in $SLURM_NVML_PLUGIN_CACHE (default /var/cache/slurm-charms/nvml-plugin), outside the
# repository; made once, remade when the installed plugins change.
# Trixie (24.11) and sid (26.05) need none of this: their roots from tools/e2e/roots.sh install
# the package.
set -euo pipefail
version=22.05.8-4+deb12u2
cache=${SLURM_NVML_PLUGIN_CACHE:-/var/cache/slurm-charms/nvml-plugin}/bookworm-$version
installed=/usr/lib/x86_64-linux-gnu/slurm-wlm
[[ -d $installed ]] || { echo "plugin-dir.sh: $installed missing (apt-get install slurmd)" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.lock"; flock 9
so=$cache/extracted/usr/lib/x86_64-linux-gnu/slurm-wlm/gpu_nvml.so
if [[ ! -f $so ]]; then
    apt=$cache/apt
    mkdir -p "$apt/lists/partial" "$apt/archives/partial"
    key=/usr/share/keyrings/debian-archive-keyring.gpg
    cat > "$apt/sources.list" <<EOF
deb [signed-by=$key] http://deb.debian.org/debian bookworm contrib
deb [signed-by=$key] http://deb.debian.org/debian-security bookworm-security contrib
EOF
    opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
          -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1
          -o APT::Sandbox::User=root)
    echo "plugin-dir.sh: downloading slurm-wlm-nvml-plugin $version (bookworm contrib)" >&2
    apt-get "${opts[@]}" -qq update >&2
    (cd "$apt/archives" && apt-get "${opts[@]}" -qq download "slurm-wlm-nvml-plugin=$version" >&2)
    rm -rf "$cache/extracted.tmp"
    dpkg-deb -x "$apt/archives/slurm-wlm-nvml-plugin_${version}_amd64.deb" "$cache/extracted.tmp"
    rm -rf "$cache/extracted"
    mv "$cache/extracted.tmp" "$cache/extracted"
fi
# The link directory is remade when an installed plugin has no link yet (an upgrade), beside
# the old one and moved into place, so a slurmd loading plugins from it never sees it half-made.
stale=false
for f in "$installed"/*.so; do
    [[ -e $cache/plugins/$(basename "$f") ]] || { stale=true; break; }
done
[[ -e $cache/plugins/gpu_nvml.so ]] || stale=true
if $stale; then
    rm -rf "$cache/plugins.tmp"
    mkdir "$cache/plugins.tmp"
    ln -s "$installed"/*.so "$cache/plugins.tmp/"
    ln -sf "$so" "$cache/plugins.tmp/gpu_nvml.so"
    rm -rf "$cache/plugins.old"
    [[ -d $cache/plugins ]] && mv "$cache/plugins" "$cache/plugins.old"
    mv "$cache/plugins.tmp" "$cache/plugins"
fi
echo "$cache/plugins"
