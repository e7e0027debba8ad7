"""The hand-off of a kernel that shares no disk with the server (a gateway's): datasets reach
it as comm messages, checked against their fingerprint in the kernel; files it makes come
back as display data of a hidden cell (kernel/handoff.py). Tested on a local kernel told it
is remote, so no gateway is needed (tests/server/test_gateway.py runs whole turns on one).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pandas as pd
import pytest
import pytest_asyncio

from jupyter_analyst.kernel import KernelSession, LocalKernelLauncher
from jupyter_analyst.kernel import handoff


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parquet_bytes(frame: pd.DataFrame, path: Path) -> bytes:
    frame.to_parquet(path)
    return path.read_bytes()


def test_kernel_side_refuses_bytes_that_do_not_match_their_fingerprint(tmp_path):
    good = parquet_bytes(pd.DataFrame({"a": [1, 2, 3]}), tmp_path / "good.parquet")
    tampered = good[:-12] + bytes(12)  # same size, other bytes
    fingerprint = sha256(good)
    handoff._parts[fingerprint] = [tampered[:10], tampered[10:]]
    with pytest.raises(ValueError, match="refused: .* hash to sha256:"):
        handoff.take(fingerprint)
    assert fingerprint not in handoff._parts, "refused bytes are not kept"
    with pytest.raises(ValueError, match="no bytes were received"):
        handoff.take(fingerprint)
    handoff._parts[fingerprint] = [good[:7], good[7:]]
    assert handoff.take(fingerprint)["a"].tolist() == [1, 2, 3]
    handoff._parts.clear()


def test_returned_files_with_hostile_names_or_sizes_are_refused(tmp_path):
    def item(path, data=b"x", **more):
        return {"path": path, "data": base64.b64encode(data).decode(), **more}

    kept = handoff.keep_returned(tmp_path, [
        item("outputs/ok.csv", b"a,b\n1,2\n"),
        item("outputs/../escaped.txt"), item("/etc/passwd"), item("elsewhere.txt"), item("outputs/.hidden"),
        item("outputs/a\nb.txt"), {"path": "outputs/bad64.txt", "data": "%%%"},
        item("outputs/link", problem="not a plain file (links are never followed)"),
        item("outputs/big.bin", b"y" * 100), "not a dict",
    ], limit=50)
    assert [str(p) for p in kept.files] == ["outputs/ok.csv"]
    assert (tmp_path / "outputs" / "ok.csv").read_bytes() == b"a,b\n1,2\n"
    reasons = dict(kept.refused)
    assert reasons["outputs/big.bin"] == "over the 50 bytes a step may return"
    assert reasons["outputs/link"].startswith("not a plain file")
    assert reasons["outputs/bad64.txt"] == "its bytes were not valid base64"
    assert reasons["outputs/a\\nb.txt"] == "not a plain name under outputs/"
    assert len(kept.refused) == 8
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["ok.csv", "outputs"], "nothing else was written"


def test_returned_files_are_never_written_through_a_link_in_the_threads_folder(tmp_path):
    host, elsewhere = tmp_path / "host", tmp_path / "elsewhere"
    (host / "outputs" / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    # What a local kernel may have left in the thread's folder before the server used a gateway.
    (host / "outputs" / "up").symlink_to(elsewhere)
    (host / "outputs" / "sub" / "victim.txt").symlink_to(elsewhere / "victim.txt")
    (host / "outputs" / "dir.txt").mkdir()

    def item(path):
        return {"path": path, "data": base64.b64encode(b"data").decode()}

    kept = handoff.keep_returned(host, [item("outputs/up/x.txt"), item("outputs/sub/victim.txt"),
                                        item("outputs/dir.txt")], limit=100)
    assert [str(p) for p in kept.files] == ["outputs/sub/victim.txt"]
    assert (host / "outputs" / "sub" / "victim.txt").read_bytes() == b"data"
    assert not (host / "outputs" / "sub" / "victim.txt").is_symlink(), "the link was replaced, not followed"
    assert [p for p, _ in kept.refused] == ["outputs/up/x.txt", "outputs/dir.txt"]
    assert all(why.startswith("cannot be written in the thread's folder") for _, why in kept.refused)
    assert list(elsewhere.iterdir()) == [], "nothing was written through a link"
    assert sorted(p.name for p in (host / "outputs").iterdir()) == ["dir.txt", "sub", "up"], "no temporary left"


class _RemoteLocal(LocalKernelLauncher):
    """A local kernel treated as one that shares no disk with us (as a gateway's)."""

    remote_kernel = "python3"


@pytest_asyncio.fixture
async def remote_kernel(tmp_path):
    async with KernelSession(tmp_path / "host", launcher=_RemoteLocal(), datasets_root=tmp_path / "ds") as session:
        yield session


@pytest.mark.asyncio
async def test_a_remote_kernel_gets_datasets_over_the_protocol_and_refuses_tampered_ones(
        remote_kernel, tmp_path, monkeypatch):
    assert remote_kernel.remote and remote_kernel.datasets_dir is None
    cwd = (await remote_kernel.execute("import os; print(os.getcwd())")).stdout.strip()
    assert Path(cwd) != remote_kernel.workdir and Path(cwd).name.startswith("analyst-"), "a folder of its own"
    frame = pd.DataFrame({"n": range(5000), "label": [f"row {i}" for i in range(5000)]})
    good = tmp_path / "good.parquet"
    data = parquet_bytes(frame, good)
    monkeypatch.setattr(handoff, "CHUNK_BYTES", 4096)  # many comm messages, reassembled in order
    loaded = await remote_kernel.load_dataset("sales", good, fingerprint=sha256(data))
    assert loaded.status == "ok", loaded.error
    assert (await remote_kernel.execute("print(sales['n'].sum(), len(sales))")).stdout.split() == [
        str(sum(range(5000))), "5000"]

    # Bytes changed on the way (here: another file sent under the first one's fingerprint).
    other = tmp_path / "other.parquet"
    parquet_bytes(frame.head(10), other)
    refused = await remote_kernel.load_dataset("tampered", other, fingerprint=sha256(data))
    assert refused.status == "error" and refused.error.ename == "ValueError"
    assert refused.error.evalue.startswith("refused:")
    assert (await remote_kernel.execute("tampered")).error.ename == "NameError", "nothing was loaded"
    assert (await remote_kernel.execute("print(len(sales))")).stdout == "5000\n", "what was loaded stays"

    # The model's code removing the receiving module does not stop the hand-off.
    gone = await remote_kernel.execute("import sys; del sys.modules['_jupyter_analyst_handoff']")
    assert gone.status == "ok" and not gone.refused_files, gone.refused_files
    again = await remote_kernel.load_dataset("again", good, fingerprint=sha256(data))
    assert again.status == "ok", again.error
    assert (await remote_kernel.execute("print(len(again))")).stdout == "5000\n"


@pytest.mark.asyncio
async def test_a_remote_kernels_files_come_back_over_the_protocol(remote_kernel):
    made = await remote_kernel.execute(
        "import os\nopen('outputs/t.csv', 'w').write('x\\n1\\n')\n"
        "os.makedirs('outputs/sub')\nopen('outputs/sub/u.txt', 'wb').write(b'\\xff' * 10)\n"
        "os.symlink('/etc/passwd', 'outputs/link')"
    )
    assert made.status == "ok", made.error
    assert [str(p) for p in made.new_files] == ["outputs/sub/u.txt", "outputs/t.csv"]
    assert (remote_kernel.workdir / "outputs" / "t.csv").read_bytes() == b"x\n1\n"
    assert (remote_kernel.workdir / "outputs" / "sub" / "u.txt").read_bytes() == b"\xff" * 10
    assert made.refused_files == [("outputs/link", "not a plain file (links are never followed)")]
    assert not made.outputs, "the hidden cell's displays are not the step's outputs"
    again = await remote_kernel.execute("open('outputs/t.csv', 'a').write('2\\n')")
    assert [str(p) for p in again.new_files] == ["outputs/t.csv"], "a changed file comes back again"
    assert (remote_kernel.workdir / "outputs" / "t.csv").read_bytes() == b"x\n1\n2\n"
    assert (await remote_kernel.execute("y = 1")).new_files == []
    # The model's code changing directory does not hide the kernel's outputs/ from the host.
    assert (await remote_kernel.execute("home = os.getcwd(); os.chdir('/')")).status == "ok"
    moved = await remote_kernel.execute("open(home + '/outputs/after.txt', 'w').write('z')")
    assert [str(p) for p in moved.new_files] == ["outputs/after.txt"]
    # A step that runs past its time keeps its files: the next step does not report them as its own.
    slow = await remote_kernel.execute("open(home + '/outputs/slow.txt', 'w').write('s')\nwhile True: pass",
                                       timeout=2)
    assert slow.status == "timeout" and [str(p) for p in slow.new_files] == ["outputs/slow.txt"]
    assert (await remote_kernel.execute("z = 1")).new_files == []
