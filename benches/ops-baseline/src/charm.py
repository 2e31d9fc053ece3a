#!/usr/bin/env python3
"""A minimal Python `ops` charm: the baseline of hook-bench (issue 7).

It does, per benchmarked hook, the same Juju work as the Rust charms, the way the reference
Python charms (canonical/slurm-charms, phase A) do it, and nothing more:

* controller `slurmd-relation-changed`: read every related unit's `node` bag (as the reference
  slurmctld charm does in every relation hook), render the node and gres lines, write one file
  atomically under `$SLURM_CHARMS_ROOT/etc/slurm/`, set the status;
* `update-status` on a non-leader controller: `is-leader`, then set the status;
* compute `update-status`: config, the controller's `cluster_info`, the unit's own `node` bag,
  `slurmd -C` and `systemctl is-active slurmd`, then set the status (no GPU detection, which the
  Rust charm does in every hook: the baseline is a lower bound for ops);
* `detect-gpus` action: NVML through `pynvml` (nvidia-ml-py), results with `action-set`.

The charm dir metadata decides which role it plays (`name:` slurmctld or slurmd), so hook-bench
can run it as the handler of the very same hook context as the Rust charm.
"""

import json
import os
import pathlib
import subprocess
import tempfile

import ops

ROOT = pathlib.Path(os.environ.get("SLURM_CHARMS_ROOT", "/"))


def write_atomic(path: pathlib.Path, text: str) -> None:
    """Write `text` to `path` through a temp file, fsync and rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


class BaselineCharm(ops.CharmBase):
    """Both roles of the baseline."""

    def __init__(self, framework: ops.Framework):
        super().__init__(framework)
        if self.meta.name == "slurmctld":
            framework.observe(self.on.update_status, self._ctl_update_status)
            framework.observe(self.on.slurmd_relation_changed, self._ctl_relation_changed)
        else:
            framework.observe(self.on.update_status, self._node_update_status)
            framework.observe(self.on.detect_gpus_action, self._detect_gpus)

    # -- controller -------------------------------------------------------------------------

    def _ctl_update_status(self, _event: ops.EventBase) -> None:
        if not self.unit.is_leader():
            self.unit.status = ops.ActiveStatus("standby (the leader manages slurm.conf)")
            return
        self.unit.status = ops.ActiveStatus()

    def _ctl_relation_changed(self, _event: ops.RelationChangedEvent) -> None:
        node_lines = []
        gres_lines = []
        for relation in self.model.relations["slurmd"]:
            for unit in sorted(relation.units, key=lambda u: u.name):
                raw = relation.data[unit].get("node")
                if not raw:
                    continue
                node = json.loads(raw)
                params = dict(node.get("node_parameters", {}))
                name = params.pop("NodeName")
                gres = params.pop("Gres", [])
                items = [f"NodeName={name}"] + [f"{k}={v}" for k, v in params.items()]
                if gres:
                    items.append("Gres=" + ",".join(gres))
                node_lines.append(" ".join(items))
                for g in node.get("gres", []):
                    gres_lines.append(
                        f"NodeName={name} " + " ".join(f"{k}={v}" for k, v in g.items())
                    )
        write_atomic(ROOT / "etc/slurm/slurm.conf.ops", "\n".join(node_lines) + "\n")
        write_atomic(ROOT / "etc/slurm/gres.conf.ops", "\n".join(gres_lines) + "\n")
        self.unit.status = ops.ActiveStatus(f"{len(node_lines)} nodes")

    # -- compute node -----------------------------------------------------------------------

    def _node_update_status(self, _event: ops.EventBase) -> None:
        _partition = self.config.get("partition-config")
        relation = self.model.get_relation("slurmctld")
        info = None
        if relation is not None and relation.app is not None:
            info = relation.data[relation.app].get("cluster_info")
            _published = relation.data[self.unit].get("node")
        facts = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=False)
        running = subprocess.run(["systemctl", "is-active", "--quiet", "slurmd"], check=False)
        if facts.returncode != 0 or running.returncode != 0 or not info:
            self.unit.status = ops.WaitingStatus("slurmd not running")
        else:
            self.unit.status = ops.ActiveStatus()

    def _detect_gpus(self, event: ops.ActionEvent) -> None:
        import pynvml

        pynvml.nvmlInit()
        try:
            results = {"driver-version": pynvml.nvmlSystemGetDriverVersion()}
            counts = {}
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                name = pynvml.nvmlDeviceGetName(h)
                minor = pynvml.nvmlDeviceGetMinorNumber(h)
                gpu_type = "_".join(name.lower().replace("-", " ").split())
                counts[gpu_type] = counts.get(gpu_type, 0) + 1
                results[f"gpus.{i}.name"] = name
                results[f"gpus.{i}.uuid"] = pynvml.nvmlDeviceGetUUID(h)
                results[f"gpus.{i}.pci-bus-id"] = pynvml.nvmlDeviceGetPciInfo(h).busId
                results[f"gpus.{i}.device-file"] = f"/dev/nvidia{minor}"
                results[f"gpus.{i}.memory"] = str(
                    pynvml.nvmlDeviceGetMemoryInfo(h, version=pynvml.nvmlMemory_v2).total
                )
            results["gres"] = ",".join(f"gpu:{t}:{c}" for t, c in sorted(counts.items()))
        finally:
            pynvml.nvmlShutdown()
        nested = {}
        for key, value in results.items():
            cur = nested
            *path, last = key.split(".")
            for p in path:
                cur = cur.setdefault(p, {})
            cur[last] = value
        event.set_results(nested)


if __name__ == "__main__":
    ops.main(BaselineCharm)
