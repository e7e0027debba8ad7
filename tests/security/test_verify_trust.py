"""Attacks by the notebook ``verify`` is handed: anyone can hand you one.

Before the fix, ``verify`` mounted every existing path its parameters cell named into the
sandboxed kernel (a cell then read the file and raised with its content, which came back in
the report), ran on the source the notebook itself claimed, took a dataset's fingerprint
from what a cell displayed, and wrote the executed copy inside the kernel's own folder
(through a link the kernel put there). Now the source is only the one the user names, the
kernel is shown that and nothing else, every fingerprint is the host's own hash, and the
host writes nothing in the kernel's folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import duckdb
import nbformat
import pytest

from jupyter_analyst.notebooks.trail import META
from jupyter_analyst.notebooks.trail import ARTIFACT_MIME
from jupyter_analyst.testing import sql_step, text_step

from .conftest import sandboxed_root, scripted

pytestmark = sandboxed_root()

SECRET = "TOP-SECRET-HOST-BYTES-9c1e"
SQL = "SELECT region_id, region FROM regions ORDER BY region_id"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, sales_db):
    """An honest export (one dataset), to be tampered with by each attack."""
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.workspace import Workspace

    root = tmp_path_factory.mktemp("honest")
    with scripted(root / "ws", sales_db, {"turns": [{"match": ".", "steps": [sql_step(SQL, "regions"),
                                                                              text_step()]}]}) as runner:
        turn = runner.run("regions")
    assert turn.status == "completed"
    ws = Workspace(root / "ws")
    try:
        path = write_export(export_thread(ws.store, ws.artifacts, turn.thread_id), root / "honest.ipynb")
    finally:
        ws.close()
    return path


@pytest.fixture(scope="module")
def host_files(tmp_path_factory):
    """A secret file and another's database, outside any sandbox (readable by anyone, so
    only a mount keeps them from a kernel)."""
    host = tmp_path_factory.mktemp("host")
    host.chmod(0o755)
    secret = host / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o644)
    vault = host / "vault.duckdb"
    with duckdb.connect(str(vault)) as con:
        con.execute(f"CREATE TABLE vault AS SELECT '{SECRET}' AS secret")
    vault.chmod(0o644)
    return {"secret": secret, "vault": vault}


def tampered(path, out, *, parameters: str | None = None, first: str | None = None, sql: str | None = None):
    """``path`` with its parameters cell, a cell run first, or its SQL step replaced."""
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    if parameters is not None:
        next(c for c in cells if "parameters" in c.metadata.get("tags", [])).source = parameters
    if sql is not None:
        next(c for c in cells if c.metadata.get(META, {}).get("tool") == "run_sql").source = sql
    if first is not None:
        setup = next(i for i, c in enumerate(cells) if c.metadata.get(META, {}).get("role") == "setup")
        cells.insert(setup + 1, nbformat.v4.new_code_cell(first))
    nbformat.write(nb, out)
    return out


READ_IT = """
try:
    seen = open(secret).read()
except OSError as exc:
    seen = 'could not read it: ' + type(exc).__name__
raise RuntimeError(seen)
"""


def test_a_path_the_parameters_cell_names_is_never_mounted(exported, host_files, sales_db, tmp_path):
    params = f"source = {str(sales_db)!r}\nsecret = {str(host_files['secret'])!r}"
    nb = tampered(exported, tmp_path / "hostile.ipynb", parameters=params, first=READ_IT)
    run = cli("verify", str(nb), "--db", str(sales_db), "--json")
    assert run.returncode == 1, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert SECRET not in run.stdout + run.stderr
    assert "RuntimeError: could not read it: FileNotFoundError" in report["error"], report["error"]
    assert report["source"] == str(sales_db)


def test_the_source_a_notebook_claims_is_never_opened(exported, host_files, tmp_path):
    # Another's database as the notebook's own source, and a cell that reads it back.
    params = f"source = {str(host_files['vault'])!r}"
    leak = "raise RuntimeError(str(analyst.sql('SELECT secret FROM vault').iloc[0, 0]))"
    nb = tampered(exported, tmp_path / "claims.ipynb", parameters=params, first=leak)
    nb_json = json.loads(nb.read_text())
    nb_json["metadata"][META]["source"] = str(host_files["vault"])
    nb.write_text(json.dumps(nb_json))
    run = cli("verify", str(nb), "--json")
    assert run.returncode == 2, run.stdout + run.stderr[-2000:]
    assert SECRET not in run.stdout + run.stderr and str(host_files["vault"]) not in run.stdout + run.stderr
    assert "no data source to verify against" in run.stderr and "--db SOURCE" in run.stderr


def test_a_fingerprint_the_kernel_shows_is_not_taken_the_hosts_own_hash_is(exported, sales_db, tmp_path):
    manifest = nbformat.read(exported, as_version=4).metadata[META]["manifest"]
    (dataset,) = manifest
    forged = b"not the query's result"
    # The SQL step runs no query: it shows and prints the recorded fingerprint, and leaves
    # other bytes where the runtime keeps its results.
    forge = (
        "import os\nfrom IPython.display import display\n"
        "os.makedirs('.analyst-results', exist_ok=True)\n"
        f"open('.analyst-results/000001.parquet', 'wb').write({forged!r})\n"
        f"display({{{ARTIFACT_MIME!r}: {{'type': 'dataset', 'name': 'regions', "
        f"'fingerprint': {dataset['fingerprint']!r}, 'rows': 3}}, 'text/plain': 'regions'}}, raw=True)\n"
        f"print({dataset['fingerprint']!r})\nregions = None"
    )
    nb = tampered(exported, tmp_path / "forged.ipynb", sql=forge)
    run = cli("verify", str(nb), "--db", str(sales_db), "--json")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    report = json.loads(run.stdout)
    (check,) = report["checks"]
    assert report["ok"] is False and report["verdict"] == "not_verified"
    assert check["status"] == "changed" and check["actual"] == "sha256:" + hashlib.sha256(forged).hexdigest()

    # Shown, but nothing kept: nothing was made.
    shown_only = forge.replace("open('.analyst-results/000001.parquet', 'wb')", "len")
    nb = tampered(exported, tmp_path / "shown.ipynb", sql=shown_only)
    report = json.loads(cli("verify", str(nb), "--db", str(sales_db), "--json").stdout)
    assert report["checks"][0]["status"] == "missing" and report["checks"][0]["actual"] is None


def test_the_host_writes_nothing_through_a_link_in_the_kernels_folder(exported, sales_db, tmp_path):
    target = tmp_path / "written-through.ipynb"
    # The kernel's folder is its working folder: it plants links where the host's files were.
    plant = (
        "import os\n"
        "for name in ['executed.ipynb', 'staging', '../executed.ipynb']:\n"
        "    try:\n"
        "        if os.path.lexists(name):\n"
        "            os.remove(name)\n"
        f"        os.symlink({str(target)!r}, name)\n"
        "    except OSError:\n"
        "        pass"
    )
    nb = tampered(exported, tmp_path / "plant.ipynb", first=plant)
    run = cli("verify", str(nb), "--db", str(sales_db), "--json")
    assert not target.exists() and not target.is_symlink()
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert json.loads(run.stdout)["verdict"] == "verified"


def test_the_papermill_engine_mounts_what_the_command_names_not_what_the_notebook_claims(host_files, tmp_path):
    secret = str(host_files["secret"])
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(f"secret = {secret!r}", metadata={"tags": ["parameters"]}),
        # What papermill itself writes, forged: an injected cell and its record of -p values.
        nbformat.v4.new_code_cell(f"secret = {secret!r}", metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("try:\n    print('read:', open(secret).read())\n"
                                  "except OSError as exc:\n    print('could not read it:', type(exc).__name__)"),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["papermill"] = {"parameters": {"secret": secret}}
    src = tmp_path / "claims.ipynb"
    nbformat.write(nb, src)

    def run(*extra: str) -> str:
        work = tmp_path / f"work{len(extra)}"
        work.mkdir()
        out = tmp_path / f"out{len(extra)}.ipynb"
        done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "papermill"), str(src), str(out),
                               "--engine", "analyst", "--cwd", str(work), "--no-progress-bar", *extra],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return nbformat.read(out, as_version=4).cells[-1].outputs[0]["text"]

    assert run() == "could not read it: FileNotFoundError\n"
    # The person running it names the file: then it is theirs to show the kernel.
    other = host_files["secret"].with_name("named.txt")
    other.write_text("named by the user")
    other.chmod(0o644)
    assert run("-p", "secret", str(other)) == "read: named by the user\n"


FORGED_TABLES = ["read_text('/etc/passwd')", "/etc/passwd", "'/etc/passwd'",
                 'regions" UNION ALL SELECT content FROM read_text(\'/etc/passwd\') --']


def test_a_table_a_forged_notebook_names_is_refused_and_reported_never_queried(exported, sales_db, tmp_path):
    # The step's record of the tables it read, forged: a table function, host paths, a
    # name that would close its quotes. The data differs, so verify looks for why.
    nb = nbformat.read(exported, as_version=4)
    step = next(c for c in nb.cells if c.metadata.get(META, {}).get("tool") == "run_sql")
    assert [i["table"] for i in step.metadata[META]["inputs"]] == ["regions"]
    step.metadata[META]["inputs"] = [{"table": name, "rows": 1} for name in FORGED_TABLES]
    forged = tmp_path / "forged-inputs.ipynb"
    nbformat.write(nb, forged)
    changed = tmp_path / "changed.duckdb"
    changed.write_bytes(sales_db.read_bytes())
    with duckdb.connect(str(changed)) as con:
        con.execute("UPDATE regions SET region = region || '!' WHERE region_id = 1")

    run = cli("verify", str(forged), "--db", str(changed), "--json")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    report = json.loads(run.stdout)
    (check,) = report["checks"]
    assert check["status"] == "changed" and check["cause"] == "data_changed", check
    # Each named, cut short, and refused: none was a table of the source, so none ran.
    assert [t["table"] for t in check["evidence"]["tables"]] == [name[:80] for name in FORGED_TABLES]
    assert all(t["note"] == "refused: not a table of the source" and t["rows_now"] is None
               for t in check["evidence"]["tables"])
    with open("/etc/passwd") as fh:
        first_line = fh.readline().strip()
    assert first_line not in run.stdout + run.stderr
    with duckdb.connect(str(changed), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM regions").fetchone()[0] > 0
