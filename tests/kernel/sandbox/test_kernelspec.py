"""The sandboxed kernelspec belongs to the install that wrote it, in a folder only we control."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import jupyter_analyst

PACKAGE_ROOT = Path(jupyter_analyst.__file__).resolve().parent.parent

#: Prints the kernelspec folder an interpreter uses and the interpreter it wrote into it.
SHOW_SPEC = (
    "import json, sys\n"
    "from jupyter_analyst.kernel.sandbox.kernelspec import kernels_dir\n"
    "folder = kernels_dir()\n"
    "spec = json.loads((folder / 'jupyter-analyst' / 'kernel.json').read_text())\n"
    "print(json.dumps({'folder': str(folder), 'python': spec['argv'][0], 'executable': sys.executable}))\n"
)


def _show_spec(python: str, tmpdir: Path) -> dict:
    # Our package and its dependencies, seen by whichever interpreter runs this.
    path = os.pathsep.join([str(PACKAGE_ROOT), *site.getsitepackages()])
    env = {**os.environ, "PYTHONPATH": path, "TMPDIR": str(tmpdir)}
    out = subprocess.run([python, "-c", SHOW_SPEC], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_two_installs_keep_their_own_kernelspec(tmp_path):
    """A second install used by the same user does not rewrite the first one's kernel.json."""
    other = tmp_path / "other-env"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(other)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    ours = _show_spec(sys.executable, tmpdir)
    theirs = _show_spec(str(other / "bin" / "python"), tmpdir)
    assert ours["python"] == ours["executable"] and theirs["python"] == theirs["executable"]
    assert ours["folder"] != theirs["folder"]
    # Read again after the other install ran: ours still names our interpreter.
    spec = json.loads((Path(ours["folder"]) / "jupyter-analyst" / "kernel.json").read_text())
    assert spec["argv"][0] == sys.executable


def _planted(tmpdir: Path) -> Path:
    return tmpdir / f"jupyter-analyst-kernels-{os.getuid()}"


def test_a_planted_symlink_in_tmp_is_not_written_through(tmp_path):
    tmpdir, victim = tmp_path / "tmp", tmp_path / "victim"
    tmpdir.mkdir()
    victim.mkdir()
    _planted(tmpdir).symlink_to(victim)
    shown = _show_spec(sys.executable, tmpdir)
    assert list(victim.iterdir()) == [], "nothing is created through another user's link"
    folder = Path(shown["folder"])
    assert not str(folder.resolve()).startswith(str(victim))
    assert shown["python"] == sys.executable


@pytest.mark.skipif(os.getuid() != 0, reason="planting a folder owned by another user needs root")
def test_a_folder_planted_by_another_user_is_not_used(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    planted = _planted(tmpdir)
    planted.mkdir(mode=0o777)
    os.chmod(planted, 0o777)
    os.chown(planted, 65534, 65534)
    shown = _show_spec(sys.executable, tmpdir)
    assert not Path(shown["folder"]).resolve().is_relative_to(planted)
    assert list(planted.iterdir()) == []


def test_the_folder_is_private(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    shown = _show_spec(sys.executable, tmpdir)
    base = _planted(tmpdir)
    st = base.lstat()
    assert st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o700
    assert Path(shown["folder"]).is_relative_to(base)
