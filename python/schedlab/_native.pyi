"""Type stubs of the extension module built from crates/schedlab-py (see its lib.rs)."""

from typing import Any

__version__: str

class SchedlabError(ValueError):
    """Bad input or a failed run; the message is the line the binary prints after
    'schedlab: '."""

def run_json(
    platform: str,
    kernel: str,
    workloads: list[str],
    duration: str | int | None = None,
    seed: int | None = None,
    strict: bool = False,
    trace: bool = False,
    *,
    trace_buffers: bool = False,
) -> tuple[str, str, dict[str, Any] | None]: ...
def reproduce_json(
    names: list[str],
    quick: bool = False,
    runs: int | None = None,
    jobs: int | None = None,
) -> tuple[str, str]: ...
def compare_json(
    platform: str,
    kernels: list[str],
    workloads: list[str],
    duration: str | int | None = None,
    seed: int | None = None,
    runs: int | None = None,
    jobs: int | None = None,
) -> tuple[str, str]: ...
