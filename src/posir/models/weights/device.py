"""Where a torch model runs: a configured CUDA device must exist on the machine the job landed on.

The DAG may be built on a machine without a GPU (a cluster's login node) while jobs run on GPU nodes, so
the check runs when a job loads its model, not when the workflow starts; the error says what to change.
"""

from __future__ import annotations


class DeviceUnavailableError(RuntimeError):
    """A configured ``device: cuda[:N]`` does not exist where the job runs."""


def require_device(device: str | None, where: str) -> None:
    """Raise :class:`DeviceUnavailableError` when ``device`` names a CUDA device this machine lacks."""
    if not device or not device.startswith("cuda"):
        return
    import torch

    available = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if index >= available:
        found = f"{available} CUDA device(s)" if available else "no CUDA device (or a CPU-only torch build)"
        raise DeviceUnavailableError(
            f"{where}.device: '{device}' but this machine has {found}. Run the job where a GPU is (rules ask for "
            f"resources gpu=1 when a model is on cuda: e.g. snakemake --profile profiles/slurm), or set "
            f"{where}.device: cpu"
        )
