"""The sow executable, for the Python tests that hold the module to it:
SOW_BIN, else `sow` on PATH."""
import os
import shutil
import subprocess

SOW = os.environ.get("SOW_BIN") or shutil.which("sow")


def cli(*args, check=True):
    """Run `sow ARGS...` (2 minutes at most); with check, a non-zero exit fails the test."""
    p = subprocess.run([SOW, *args], capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"sow {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p
