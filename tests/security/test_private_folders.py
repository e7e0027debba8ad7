"""The user's own working folder (papermill's ``--cwd``) is never the kernel's.

Before the fix, started as root, the kernel's leased uid was given the user's folder and
everything in it (``chown -R``), for good: a home folder's files changed hands. Now the
kernel works in a staging folder of its own, mounted at the folder's path; the host copies
back what it made, as hostile ground: a link the kernel planted is not followed, and a
link already in the user's folder is not written through. A kernel cannot reach another
kernel's staging folder.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jupyter_analyst.kernel import SANDBOX_KERNEL, SETTINGS_ENV, LocalKernelLauncher, SandboxSettings
from jupyter_analyst.kernel import kernel_environment
from jupyter_analyst.kernel.sandbox.reach import may

from .conftest import sandboxed_root

pytestmark = sandboxed_root()

BIN = Path(sys.executable).parent
NOBODY = 65534


def user_folder(path: Path, mode: int = 0o750) -> Path:
    """A user's folder (``nobody``'s, like a home folder) with a 0600 file in it."""
    path.mkdir(mode=mode)
    (path / "data.csv").write_text("a\n1\n")
    os.chmod(path / "data.csv", 0o600)
    for p in (path, path / "data.csv"):
        os.chown(p, NOBODY, NOBODY)
    os.chmod(path, mode)
    return path


def papermill(tmp_path: Path, folder: Path, code: str) -> subprocess.CompletedProcess:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("source = 'x'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(code),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "in.ipynb")
    return subprocess.run([str(BIN / "papermill"), str(tmp_path / "in.ipynb"), str(tmp_path / "out.ipynb"),
                           "--engine", "analyst", "--no-progress-bar", "--cwd", str(folder),
                           "-p", "source", str(folder / "data.csv")],
                          capture_output=True, text=True, timeout=300)


def owners(folder: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for p in [folder, *folder.rglob("*")]:
        st = os.lstat(p)
        out[str(p.relative_to(folder))] = (st.st_uid, st.st_gid, st.st_mode)
    return out


def test_the_users_folder_and_files_keep_their_owner_and_mode(tmp_path):
    folder = user_folder(tmp_path / "home")
    (folder / "notes.txt").write_text("mine\n")
    os.chown(folder / "notes.txt", NOBODY, NOBODY)
    before = owners(folder)
    run = papermill(tmp_path, folder, "open('notes.txt', 'w').write('rewritten')\nopen('new.txt', 'w').write('n')")
    assert run.returncode == 0, run.stderr[-2000:]
    after = owners(folder)
    # notes.txt was not named, so the kernel made its own; it replaces the user's, which keeps
    # its owner and mode. Nothing else of the user's changed; the new file is the folder owner's.
    assert (folder / "notes.txt").read_text() == "rewritten"
    assert {k: v for k, v in after.items() if k in before} == before
    assert after["new.txt"][:2] == (NOBODY, NOBODY)
    assert (folder / "data.csv").read_text() == "a\n1\n", "a named input is never copied back"


def test_a_link_the_kernel_plants_is_not_followed_when_its_files_are_copied_out(tmp_path):
    secret = tmp_path / "root-only"
    secret.write_text("the host's secret\n")
    os.chmod(secret, 0o600)
    folder = user_folder(tmp_path / "home")
    code = (
        "import os\n"
        f"os.symlink({str(secret)!r}, 'leak.txt')\n"
        "os.symlink('/etc', 'etc')\n"
        "os.mkfifo('pipe')\n"
        "open('plain.txt', 'w').write('ok')\n"
        "open('shared.txt', 'w').write('two names')\n"
        "os.link('shared.txt', 'hard.txt')\n"
    )
    run = papermill(tmp_path, folder, code)
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv", "plain.txt"]
    assert "leak.txt: a symbolic link (links are never followed)" in run.stderr
    assert "pipe: not a regular file" in run.stderr and "hard.txt: a hard link" in run.stderr
    assert all("secret" not in p.read_text() for p in folder.iterdir())


def test_a_link_in_the_users_folder_is_not_written_through(tmp_path):
    target = tmp_path / "root-owned.txt"
    target.write_text("untouched\n")
    folder = user_folder(tmp_path / "home")
    os.symlink(target, folder / "result.txt")
    os.symlink(tmp_path, folder / "outputs")
    run = papermill(tmp_path, folder,
                    "import os\nos.makedirs('outputs')\nopen('outputs/target.txt', 'w').write('x')\n"
                    "open('result.txt', 'w').write('overwritten')")
    assert run.returncode == 0, run.stderr[-2000:]
    assert target.read_text() == "untouched\n" and (folder / "result.txt").is_symlink()
    assert not (tmp_path / "target.txt").exists()
    assert "result.txt: the working folder has a link" in run.stderr
    assert "outputs/target.txt: outputs in the working folder is a link" in run.stderr


async def _run(client, code: str) -> str:
    out: list[str] = []

    def hook(msg) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append(f"{msg['content']['ename']}")

    await client.execute_interactive(code, output_hook=hook, timeout=60)
    return "".join(out)


def _env(folder: Path) -> dict[str, str]:
    env = kernel_environment()
    env[SETTINGS_ENV] = SandboxSettings(readable=[str(folder / "data.csv")],
                                        user_workdir=True).model_dump_json()
    return env


def test_another_kernel_cannot_reach_a_kernels_staging_folder(tmp_path):
    first_folder = user_folder(tmp_path / "first")
    second_folder = user_folder(tmp_path / "second")

    async def main() -> tuple[Path, os.stat_result, tuple[int, int], str]:
        launcher = LocalKernelLauncher(ready_timeout=60)
        first, first_client = await launcher.launch(SANDBOX_KERNEL, first_folder, _env(first_folder))
        try:
            assert await _run(first_client, "open('mine.txt', 'w').write('first kernel only')") == ""
            stage = first.provisioner.stage.work
            st = os.stat(stage)
            probe = (f"import os\ntry:\n    print(open({str(stage / 'mine.txt')!r}).read())\n"
                     "except OSError as e:\n    print(type(e).__name__)")
            second, second_client = await launcher.launch(SANDBOX_KERNEL, second_folder, _env(second_folder))
            try:
                seen = (await _run(second_client, probe)).strip()
                ids = (second.provisioner.identity.uid, second.provisioner.identity.gid)
            finally:
                second_client.stop_channels()
                await launcher.stop(second)
        finally:
            first_client.stop_channels()
            await launcher.stop(first)
        return stage, st, ids, seen

    stage, st, second_ids, seen = asyncio.run(main())
    # The sandboxed second kernel does not see it at all; and on the host (a kernel without
    # bubblewrap sees the host's folders) its uid could not enter it.
    assert seen == "FileNotFoundError"
    assert st.st_mode & 0o777 == 0o700 and st.st_uid >= 900_000_000 and st.st_uid != second_ids[0]
    assert not may(st, *second_ids, 1)
    assert (first_folder / "mine.txt").read_text() == "first kernel only"
    assert not stage.exists(), "the staging folder goes with the kernel"
