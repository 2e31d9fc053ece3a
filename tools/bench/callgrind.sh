#!/usr/bin/env bash
# Instructions per controller `slurmd-relation-changed` hook at N related units, counted by
# callgrind inside `slurmctld::handle` (tests/charm_profile.rs runs the hooks in one process, as
# the charm binary would). Two runs, with 0 and ITER changed hooks after
# the store-building first one; the difference over ITER is one changed hook.
#   bash tools/bench/callgrind.sh                      # N=10000 ITER=4 SCENARIO=bench
#   N=10000 SCENARIO=enlisting bash tools/bench/callgrind.sh   # or SCENARIO=configuring / unchanged
#   DIFFER=1 bash tools/bench/callgrind.sh                     # every node its own RealMemory
# Needs valgrind (Debian package `valgrind`). Prints the total and the top functions (inclusive).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_PROFILE_RELEASE_DEBUG=1
bin=$(cargo test --release --test charm_profile --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("executable") and "charm_profile" in m["executable"]: print(m["executable"])' | tail -1)
iter=${ITER:-4}
out=$(mktemp -d)
for it in 0 "$iter"; do
    ITER=$it valgrind --tool=callgrind --callgrind-out-file="$out/cg.$it" \
        '--toggle-collect=slurm_charms::charms::slurmctld::handle*' \
        "$bin" --ignored --nocapture controller_changed_hooks_for_a_profile >/dev/null 2>&1
done
python3 - "$out" "$iter" <<'PY'
import re, subprocess, sys
out, n = sys.argv[1], int(sys.argv[2])
def inclusive(f):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f],
                          capture_output=True, text=True).stdout
    total, fns = 0, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S.*?)\s*$", line)
        if not m:
            continue
        v = int(m.group(1).replace(",", ""))
        name = re.sub(r"^[^:]*:", "", m.group(2), count=1)
        name = re.sub(r" \[.*\]$| \([\d,]+x\)$|'\d+$", "", name)
        if "PROGRAM TOTALS" in name:
            total = v
        elif name.startswith("slurm_charms::charms::slurmctld"):
            fns[name] = max(fns.get(name, 0), v)
    return total, fns
t0, f0 = inclusive(f"{out}/cg.0")
t1, f1 = inclusive(f"{out}/cg.{n}")
print(f"per changed hook: {(t1 - t0) / n / 1e6:.1f} M instructions (callgrind, slurmctld::handle)")
rows = sorted(((k, (v - f0.get(k, 0)) / n / 1e6) for k, v in f1.items()), key=lambda r: -r[1])
for k, v in rows[:12]:
    print(f"{v:8.1f} M  {k[:110]}")
PY
rm -rf "$out"
