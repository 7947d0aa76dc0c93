"""Which device a model encodes on, and whether a requested CUDA device really works.

PyPI's torch for Linux is a CUDA build (tools/requirements-mteb-lock.txt pins torch
2.15.0+cu132, CUDA 13.2). CUDA 13.x runs on NVIDIA drivers from 580 on (NVIDIA's CUDA
Compatibility guide, "Minor Version Compatibility": CUDA 13.x needs >= 580). With an older
driver torch.cuda.is_available() is False with only a warning, and a model asked for
"cuda" may end up on the CPU: check_device refuses that before any encoding.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from typing import Any

NO_DEVICE_EXIT = 3  # as `mieb-eval run --device cuda` without a usable GPU
# The minimum NVIDIA driver per CUDA major version (NVIDIA CUDA Compatibility guide, table
# "CUDA Toolkit Driver Version Ranges"), and the CUDA version that driver branch supports.
MIN_DRIVER = {13: ("580", 13000), 12: ("525", 12000), 11: ("450", 11000)}


class DeviceUnusable(Exception):
    """A CUDA device was asked for and torch cannot use it."""


def _nvidia_smi_driver() -> str | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        r = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    first = r.stdout.strip().splitlines()[:1]
    return first[0].strip() if r.returncode == 0 and first else None


def _driver_cuda_version(torch: Any) -> int | None:
    """The CUDA version the installed driver supports (e.g. 12020), from torch's private
    _cuda_getDriverVersion where it exists, else from libcuda's cuDriverGetVersion; None
    when there is no driver library."""
    try:
        return int(torch._C._cuda_getDriverVersion())
    except Exception:  # noqa: BLE001 - private API, absent in some builds
        pass
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    v = ctypes.c_int(0)
    try:
        return int(v.value) if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else 0
    except AttributeError:
        return 0


def _cuda_api(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def driver_report(torch: Any) -> str:
    """The driver found (nvidia-smi's version, and the CUDA version the driver supports as
    torch reads it) and the one needed for this torch's CUDA build."""
    parts = []
    smi = _nvidia_smi_driver()
    parts.append(f"NVIDIA driver {smi} (nvidia-smi)" if smi else "no nvidia-smi on PATH")
    dv = _driver_cuda_version(torch)
    if dv is None:
        parts.append("no CUDA driver library (libcuda.so.1)")
    elif dv > 0:
        parts.append(f"the driver supports CUDA {_cuda_api(dv)}")
    built = getattr(torch.version, "cuda", None)
    if built:
        major = int(built.split(".")[0])
        need = MIN_DRIVER.get(major)
        want = f"; torch {torch.__version__} is built for CUDA {built}" + (
            f" and needs an NVIDIA driver >= {need[0]} (CUDA {_cuda_api(need[1])})" if need else "")
    else:
        want = f"; torch {torch.__version__} is a CPU-only build (install a CUDA build of torch)"
    return "found: " + ", ".join(parts) + want


def check_device(device: str | None) -> str:
    """The device to encode on, checked: None/'cpu' pass; 'cuda' or 'cuda:N' must be usable by
    torch (is_available, the index exists, a tiny matrix product on it gives the right
    answer), else DeviceUnusable with the driver found and the one needed."""
    if device is None or device == "cpu":
        return device or "cpu"
    if not re.fullmatch(r"cuda(:\d+)?", device):
        raise ValueError(f"--device must be cpu, cuda or cuda:N, not {device!r}")
    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ok = torch.cuda.is_available()
    why = "; ".join(str(w.message).strip() for w in caught)
    if not ok:
        raise DeviceUnusable(f"--device {device}: torch cannot use CUDA"
                             + (f" ({why})" if why else "") + f"; {driver_report(torch)}")
    idx = int(device.split(":")[1]) if ":" in device else 0
    n = torch.cuda.device_count()
    if idx >= n:
        raise DeviceUnusable(f"--device {device}: torch sees {n} CUDA device(s) (0..{n - 1}); "
                             f"{driver_report(torch)}")
    try:
        x = torch.ones(4, 4, device=device)
        got = float((x @ x).sum().item())
    except Exception as e:  # noqa: BLE001 - any CUDA error means "unusable"
        raise DeviceUnusable(f"--device {device}: a test operation failed: {e}; {driver_report(torch)}") from e
    if got != 64.0:
        raise DeviceUnusable(f"--device {device}: a test matrix product gave {got}, not 64")
    return device


def describe_model(model: Any) -> str:
    """Where the model's weights are, e.g. 'cuda:0 (torch.float16)', from the first torch module
    found on the model or its wrappers; 'unknown device' when there is none (a model of your own)."""
    try:
        import torch
    except ImportError:
        return "unknown device"
    seen: set[int] = set()
    todo = [model]
    while todo:
        m = todo.pop(0)
        if id(m) in seen or len(seen) > 200:
            continue
        seen.add(id(m))
        if isinstance(m, torch.nn.Module):
            for p in m.parameters():
                return f"{p.device} ({p.dtype})"
            continue
        d = getattr(m, "__dict__", None)
        if isinstance(d, dict):
            todo.extend(v for k, v in d.items() if not k.startswith("__") and hasattr(v, "__dict__"))
    dev = getattr(model, "device", None)
    return str(dev) if dev is not None else "an unknown device (no torch module found on the model)"
