"""What a sandboxed kernel sees of the host's system: of ``/etc`` only the allow-list, its own
accounts, no ``/opt``; and a data kernel still works in it.

Before the fix the sandbox mounted the host's whole ``/etc`` (and ``/opt``): the model's code
read every world-readable file there, a system-wide Jupyter configuration holding the model
endpoint's key, pip's index credentials and every local account among them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_asyncio

import jupyter_analyst
from jupyter_analyst.kernel import KernelSession
from jupyter_analyst.kernel.sandbox import SandboxPolicy
from jupyter_analyst.kernel.sandbox.bwrap_command import bwrap_command, find_bwrap
from jupyter_analyst.kernel.sandbox.system_view import ETC_ALLOW, ETC_NETWORK, etc_files

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (make installs it)")

SECRET = "sk-etc-secret-" + secrets.token_hex(8)

#: What the kernel prints of its view of /etc and /opt.
LOOK = """
    import json, os
    seen = []
    for folder, dirs, files in os.walk("/etc"):
        seen += [os.path.join(folder, name) for name in dirs + files]
    leaked = []
    for path in seen:
        try:
            if os.path.isfile(path) and SECRET.encode() in open(path, "rb").read():
                leaked.append(path)
        except OSError:
            pass
    try:
        planted = open(PLANTED).read()
    except OSError as e:
        planted = type(e).__name__
    try:
        open("/etc/ld.so.preload", "w").write("/w/evil.so")
        wrote = True
    except OSError:
        wrote = False
    print(json.dumps({"seen": seen, "leaked": leaked, "planted": planted, "opt": os.path.exists("/opt"),
                      "localtime": os.readlink("/etc/localtime"), "wrote": wrote}))
"""
#: What the kernel prints of its accounts and host name.
WHO = """
    import getpass, grp, json, os, pwd, socket
    home = os.environ.pop("HOME")
    os.environ.pop("USER"), os.environ.pop("LOGNAME")  # getpass then asks the password file
    me = pwd.getpwuid(os.getuid())
    print(json.dumps({
        "passwd": open("/etc/passwd").read(), "accounts": [p.pw_name for p in pwd.getpwall()], "me": me.pw_name,
        "dir": me.pw_dir, "home": home, "user": getpass.getuser(), "group": grp.getgrgid(os.getgid()).gr_name,
        "expand": os.path.expanduser("~"), "hostname": socket.gethostname(),
        "localhost": socket.gethostbyname("localhost"),
    }))
"""


def allowed(path: str) -> bool:
    """Whether ``path`` (in the sandbox's /etc) is an allow-listed name, inside one, above one,
    or one of the sandbox's own files."""
    rel = Path(path).relative_to("/etc")
    names = [Path(n) for n in (*ETC_ALLOW, *ETC_NETWORK)] + [p.relative_to("/etc") for p in etc_files(
        1, 1, home=Path("/"), network=False)]
    return any(rel == n or n in rel.parents or rel in n.parents for n in names)


def host_accounts() -> set[str]:
    """The host's local account names but the three the sandbox lists."""
    with open("/etc/passwd") as fh:
        names = {line.split(":", 1)[0] for line in fh if ":" in line}
    return names - {"root", "nobody", "analyst"}


@pytest.fixture(scope="module")
def planted():
    """A world-readable Jupyter configuration with a key, in a folder of the host's /etc of
    this test's own (so no Jupyter server on this machine reads it), removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("writing into /etc needs root")
    folder = Path("/etc") / f"ja-test-{secrets.token_hex(6)}"
    folder.mkdir(mode=0o755)
    try:
        config = folder / "jupyter_server_config.json"
        config.write_text(json.dumps({"AnalystApp": {"api_key": SECRET}}))
        config.chmod(0o644)
        yield config
    finally:
        shutil.rmtree(folder)


def test_only_the_allow_list_of_etc_is_mounted_and_no_opt(tmp_path):
    cmd = bwrap_command(["python"], bwrap="bwrap", workdir=tmp_path, policy=SandboxPolicy(), identity=(900000007,) * 2,
                        address_space_limit=False, etc_fds={Path("/etc/passwd"): 9})
    pairs = list(zip(cmd, cmd[1:], cmd[2:]))
    binds = [dest for flag, _, dest in pairs if flag in ("--ro-bind", "--bind", "--symlink")]
    assert "/etc" not in binds and "/opt" not in binds
    assert all(allowed(dest) for dest in binds if dest.startswith("/etc/")), binds
    assert ("--ro-bind-data", "9", "/etc/passwd") in pairs
    assert ("--symlink", os.readlink("/etc/localtime"), "/etc/localtime") in pairs, "the zone's name is the link's"
    network = bwrap_command(["python"], bwrap="bwrap", workdir=tmp_path, policy=SandboxPolicy(network=True),
                            identity=None, address_space_limit=False)
    assert ("/etc/resolv.conf" in network) == os.path.lexists("/etc/resolv.conf")
    assert "/etc/resolv.conf" not in cmd


def test_the_sandboxs_accounts_name_the_kernel_and_no_one_else():
    files = etc_files(900000042, 900000042, home=Path("/w/thr"), network=False)
    passwd = files[Path("/etc/passwd")].decode().splitlines()
    assert [line.split(":")[0] for line in passwd] == ["root", "analyst", "nobody"]
    assert "analyst:x:900000042:900000042:analyst:/w/thr:/bin/sh" in passwd
    assert files[Path("/etc/group")].decode().splitlines()[1] == "analyst:x:900000042:"
    assert "passwd: files\n" in files[Path("/etc/nsswitch.conf")].decode()
    assert Path("/etc/hosts") not in etc_files(1000, 1000, home=Path("/w"), network=True), "the network's are the host's"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(tmp_path_factory, planted):
    session = KernelSession(tmp_path_factory.mktemp("etc") / "thr_1", sandbox=SandboxPolicy(processes=128))
    async with session:
        yield session



@pytest.mark.asyncio(loop_scope="module")
@needs_bwrap
async def test_the_kernel_sees_of_etc_only_the_allow_list_and_no_opt(kernel, planted):
    code = textwrap.dedent(LOOK).replace("SECRET", repr(SECRET)).replace("PLANTED", repr(str(planted)))
    r = await kernel.execute(code)
    assert r.status == "ok", r.error
    out = json.loads(r.stdout)
    assert out["planted"] == "FileNotFoundError" and out["leaked"] == []
    assert [p for p in out["seen"] if not allowed(p)] == [], "only the allow-list of the host's /etc"
    present = {f"/etc/{name}" for name in ETC_ALLOW if os.path.lexists(f"/etc/{name}")}
    assert present <= set(out["seen"]), "what a data kernel needs is there"
    assert out["localtime"] == os.readlink("/etc/localtime")
    assert out["wrote"] is False, "the sandbox's /etc is read-only"
    assert out["opt"] is False or Path(sys.base_prefix).resolve().is_relative_to("/opt")


@pytest.mark.asyncio(loop_scope="module")
@needs_bwrap
async def test_the_kernels_accounts_are_its_own_and_no_host_account_is_listed(kernel):
    r = await kernel.execute(textwrap.dedent(WHO))
    assert r.status == "ok", r.error
    out = json.loads(r.stdout)
    assert out["accounts"] == ["root", "analyst", "nobody"]
    assert not host_accounts() & set(out["passwd"].replace(":", " ").split())
    assert out["me"] == out["user"] == out["group"] == "analyst"
    assert out["dir"] == out["home"] == out["expand"]
    assert out["hostname"] == "analyst-sandbox" and out["localhost"] == "127.0.0.1"


@pytest.mark.asyncio(loop_scope="module")
@needs_bwrap
async def test_a_data_kernel_still_works_charts_time_zones_and_certificates(kernel):
    import ssl

    import duckdb

    r = await kernel.execute(textwrap.dedent("""
        import json, ssl, subprocess
        import duckdb, numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
        import matplotlib.pyplot as plt
        from matplotlib import font_manager
        frame = pd.DataFrame({"x": np.arange(5), "at": pd.date_range("2024-01-01", periods=5, tz="Europe/Paris")})
        pq.write_table(pa.Table.from_pandas(frame), "f.parquet")
        total = duckdb.sql("SELECT sum(x) FROM 'f.parquet'").fetchall()[0][0]
        zone = duckdb.sql("SELECT current_setting('TimeZone')").fetchall()[0][0]
        fig, ax = plt.subplots()
        ax.plot(frame.x, frame.x ** 2); ax.set_title("Revenue by région"); ax.set_xlabel("day")
        plt.show()
        print(json.dumps({"total": int(total), "zone": zone, "fonts": len(font_manager.findSystemFonts()),
                          "cas": ssl.create_default_context().cert_store_stats()["x509_ca"],
                          "ls": subprocess.run(["ls", "/"], capture_output=True).returncode}))
    """))
    assert r.status == "ok", r.error
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.images, "the chart was drawn"
    assert out["total"] == 10 and out["ls"] == 0
    assert out["zone"] == duckdb.sql("SELECT current_setting('TimeZone')").fetchall()[0][0], "the host's zone"
    assert out["cas"] == ssl.create_default_context().cert_store_stats()["x509_ca"], "the public certificates"
    from matplotlib import font_manager

    assert out["fonts"] == len(font_manager.findSystemFonts()), "the system's fonts"


#: A program started as a user who is not root, in a view of this machine where that user
#: reaches this install and the test's folder; the kernel it starts shares its uid.
AS_USER = """
import asyncio, json, os, pwd
from pathlib import Path
from jupyter_analyst.kernel import KernelSession, SandboxPolicy

async def main():
    async with KernelSession(Path(WORKDIR), sandbox=SandboxPolicy(memory_mb=2048)) as session:
        r = await session.execute(CODE)
        return {"status": r.status, "stdout": r.stdout, "error": r.error and r.error.evalue,
                "sandboxed": getattr(session._provisioner(), "sandboxed", False)}

print(json.dumps(asyncio.run(main())))
"""

USER = 54_321


def view_for(*paths: Path) -> list[str]:
    """bubblewrap arguments that leave this machine as it is but let any user reach
    ``paths``: the first folder above each that others may not enter is replaced by an
    empty 0755 one, and the path is put back inside it."""
    mounts: list[str] = []
    covered: dict[Path, set[Path]] = {}
    for path in paths:
        top = next((f for f in reversed(path.parents) if not os.stat(f).st_mode & 0o001), None)
        if top is None:
            continue
        made = covered.setdefault(top, set())
        if not made:
            mounts += ["--perms", "0755", "--tmpfs", str(top)]
        for folder in reversed(path.parents):
            if top in folder.parents and folder not in made:
                mounts += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
        mounts += ["--dev-bind", str(path), str(path)]
    return mounts


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")
def test_a_kernel_started_by_a_user_who_is_not_root_has_the_same_view(tmp_path):
    """Not started as root, the kernel keeps its user's uid (in a user namespace): the sandbox's
    password file names that uid ``analyst``, and the host's accounts are not there."""
    home = tmp_path / "user"
    (home / "tmp").mkdir(parents=True)
    shutil.chown(home, USER, USER)
    shutil.chown(home / "tmp", USER, USER)
    code = textwrap.dedent("""
        import json, os, pwd
        try:
            open("/etc/ld.so.preload", "w").write("/w/evil.so")
            wrote = True
        except OSError:
            wrote = False
        print(json.dumps({"uid": os.getuid(), "me": pwd.getpwuid(os.getuid()).pw_name, "wrote": wrote,
                          "accounts": [p.pw_name for p in pwd.getpwall()],
                          "etc": sorted(os.listdir("/etc")), "opt": os.path.exists("/opt")}))
    """)
    program = AS_USER.replace("WORKDIR", repr(str(home / "k"))).replace("CODE", repr(code))
    package = Path(jupyter_analyst.__file__).resolve().parent
    view = view_for(Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), package, home)
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": str(home / "tmp")}
    done = subprocess.run([find_bwrap(), "--dev-bind", "/", "/", *view, "--", setpriv, f"--reuid={USER}",
                           f"--regid={USER}", "--clear-groups", "--", sys.executable, "-c", program],
                          capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok" and result["sandboxed"], result
    out = json.loads(result["stdout"])
    assert out["uid"] == USER and out["me"] == "analyst"
    assert out["wrote"] is False, "bubblewrap made /etc in the user's namespace: the user's, but read-only"
    assert out["accounts"] == ["root", "analyst", "nobody"] and out["opt"] is False
    assert [name for name in out["etc"] if not allowed(f"/etc/{name}")] == []
