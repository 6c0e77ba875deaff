"""What the bench scripts record about the machine they ran on (imported by them; run from the
repository root as `python bench/SCRIPT.py`, so that this directory is on the module path)."""

import platform


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, else what platform reports."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
