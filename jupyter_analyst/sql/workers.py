"""What the SQL check's and the engine's worker processes share, seen from the host."""

from __future__ import annotations

import subprocess


def close_pipes(proc: subprocess.Popen) -> None:
    """Close the host's ends of a worker's stdin and stdout (never raises: the worker may be
    gone and its pipes broken)."""
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
