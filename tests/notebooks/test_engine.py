"""The papermill engine in a user's private folder, run as root.

Started as root, the kernel runs as a leased uid that owns nothing. Before the fix a 0700
folder (``mktemp -d``) or a 0750 home folder with 0600 data in it stopped the run with
"let other users read them (chmod o+rX ...)", and a folder the uid could enter was given
to it (``chown -R``) for good. Now the kernel works in a staging folder mounted at the
folder's path, the named data copied in, its outputs copied back; the user's folder and
files keep their owner and mode. papermill is the released one, run as a command.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jupyter_analyst.kernel.sandbox.bwrap_command import find_bwrap

pytestmark = [
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (make installs it)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="per-kernel identities need root"),
]

BIN = Path(sys.executable).parent
NOBODY = 65534

READ_AND_WRITE = (
    "import os\n"
    "text = open(source).read()\n"
    "os.makedirs('outputs', exist_ok=True)\n"
    "open('outputs/upper.csv', 'w').write(text.upper())\n"
    "print(os.getcwd(), os.getuid(), repr(text))"
)


def notebook(folder: Path, code: str = READ_AND_WRITE) -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("source = 'x'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(code),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "in.ipynb"
    nbformat.write(nb, path)
    return path


def private_folder(path: Path, mode: int, owner: int, data: str = "a,b\n1,2\n") -> Path:
    """A folder like a user's own: ``mode``, owned by ``owner``, a 0600 ``data.csv`` in it."""
    path.mkdir()
    notebook(path)
    (path / "data.csv").write_text(data)
    os.chmod(path / "data.csv", 0o600)
    for p in (path, path / "in.ipynb", path / "data.csv"):
        os.chown(p, owner, owner)
    os.chmod(path, mode)
    return path


def stats(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Owner, group and mode of the folder and of everything in it."""
    out = {".": _stat(folder)}
    for p in folder.rglob("*"):
        out[str(p.relative_to(folder))] = _stat(p)
    return out


def _stat(p: Path) -> tuple[int, int, int]:
    st = os.lstat(p)
    return st.st_uid, st.st_gid, st.st_mode


def papermill(src: Path, out: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "papermill"), str(src), str(out), "--engine", "analyst", "--no-progress-bar",
                           *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def printed(out: Path) -> str:
    return "".join(o.get("text", "") for o in nbformat.read(out, as_version=4).cells[-1].outputs)


@pytest.mark.parametrize(("mode", "owner"), [(0o700, 0), (0o750, NOBODY)], ids=["mktemp-0700", "home-0750"])
def test_papermill_runs_in_a_private_folder_and_its_outputs_land_without_opening_it_up(tmp_path, mode, owner):
    folder = private_folder(tmp_path / "mine", mode, owner)
    before = stats(folder)
    run = papermill(folder / "in.ipynb", tmp_path / "out.ipynb", "--cwd", str(folder),
                    "-p", "source", str(folder / "data.csv"))
    assert run.returncode == 0, run.stderr[-2000:]
    cwd, uid, text = printed(tmp_path / "out.ipynb").split(" ", 2)
    assert cwd == str(folder) and int(uid) >= 900_000_000 and text.strip() == repr("a,b\n1,2\n")
    assert (folder / "outputs" / "upper.csv").read_text() == "A,B\n1,2\n"
    after = stats(folder)
    # Nothing of the user's changed hands or modes; what came back is the folder owner's.
    assert {k: v for k, v in after.items() if k in before} == before
    assert after["outputs"][:2] == after["outputs/upper.csv"][:2] == (owner, owner)
    assert set(after) - set(before) == {"outputs", "outputs/upper.csv"}, "the kernel's caches stay behind"


def test_a_relative_input_in_the_folder_is_found_where_the_notebook_looks(tmp_path):
    folder = private_folder(tmp_path / "mine", 0o700, 0)
    run = papermill(Path("in.ipynb"), tmp_path / "out.ipynb", "-p", "source", "data.csv", cwd=folder)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (folder / "outputs" / "upper.csv").read_text() == "A,B\n1,2\n"


def test_data_in_another_private_folder_is_copied_for_the_kernel_not_opened_up(tmp_path):
    data = private_folder(tmp_path / "data", 0o700, NOBODY, data="x\n7\n")
    folder = private_folder(tmp_path / "mine", 0o750, NOBODY)
    before = stats(data)
    run = papermill(folder / "in.ipynb", tmp_path / "out.ipynb", "--cwd", str(folder),
                    "-p", "source", str(data / "data.csv"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert (folder / "outputs" / "upper.csv").read_text() == "X\n7\n"
    assert stats(data) == before


def test_a_file_the_user_did_not_name_is_not_in_the_kernels_folder(tmp_path):
    # Only what the user names goes in: not whatever else the folder holds (a home folder).
    folder = private_folder(tmp_path / "mine", 0o700, 0)
    (folder / "other.csv").write_text("secret\n")
    src = notebook(tmp_path, "import os\nprint(sorted(os.listdir('.')))\nopen('other.csv').read()")
    run = papermill(src, tmp_path / "out.ipynb", "--cwd", str(folder), "-p", "source", str(folder / "data.csv"))
    assert run.returncode != 0 and "FileNotFoundError" in run.stderr
    assert [n for n in ast.literal_eval(printed(tmp_path / "out.ipynb")) if not n.startswith(".")] == ["data.csv"]
