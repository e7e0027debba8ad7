"""The DataFrame a kernel gets for a dataset is the stored artifact's rows, whichever way the
artifact reached it: the file read in place (a local kernel) or its bytes sent over the
kernel protocol (a gateway's). The artifact is written as the DuckDB engine writes a
result (the same COPY options), with the types that convert least plainly: decimals,
time stamps with a time zone, nulls of every kind, strings, an empty result.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jupyter_analyst.kernel import KernelSession, LocalKernelLauncher, SandboxPolicy
from jupyter_analyst.kernel.loader import read_dataset
from jupyter_analyst.sql.duckdb_engine import _PARQUET_OPTIONS

ROWS = """
SELECT i AS n,
       CASE WHEN i % 3 = 0 THEN NULL ELSE i * 10 END AS maybe_n,
       (i * 1.25)::DECIMAL(18, 2) AS price,
       CASE WHEN i % 4 = 0 THEN NULL ELSE (i / 7)::DECIMAL(9, 3) END AS maybe_price,
       TIMESTAMPTZ '2024-03-10 01:30:00+00' + to_hours(i::INTEGER) AS at_utc,
       CASE WHEN i % 5 = 0 THEN NULL ELSE TIMESTAMP '2024-01-01' + to_days(i::INTEGER) END AS at_local,
       DATE '2024-02-28' + i::INTEGER AS day,
       CASE WHEN i % 2 = 0 THEN NULL ELSE 'row ' || i || ' é ✓' END AS label,
       i % 2 = 0 AS even,
       i * 0.5 AS half
FROM range(50) AS t(i) ORDER BY n
"""


def artifact(folder: Path, name: str, sql: str) -> tuple[Path, str]:
    """A result file as the DuckDB engine writes it, and its fingerprint."""
    path = folder / f"{name}.parquet"
    with duckdb.connect() as conn:
        conn.execute("SET TimeZone = 'America/New_York'")  # the engine's zone is not the file's
        conn.execute(f"COPY ({sql}) TO '{path}' ({_PARQUET_OPTIONS})")
    return path, "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def expected(path: Path) -> pd.DataFrame:
    """The artifact's rows as the kernel's contract gives them: Arrow's own conversion, with
    DECIMAL as float64 (read here without the loader)."""
    table = pq.read_table(path)
    columns = [c.cast(pa.float64()) if pa.types.is_decimal(c.type) else c for c in table.columns]
    return pa.table(columns, names=table.column_names).to_pandas()


class _Remote(LocalKernelLauncher):
    """A local kernel treated as one that shares no disk with us (as a gateway's)."""

    remote_kernel = "python3"


async def kernel_frame(kernel: KernelSession, path: Path, fingerprint: str, out: Path) -> pd.DataFrame:
    """Load the dataset into ``kernel`` and bring its DataFrame back by pickle."""
    loaded = await kernel.load_dataset("data", path, fingerprint=fingerprint)
    assert loaded.status == "ok", loaded.error
    # The DataFrame is the kernel's own: changed in place like any other.
    changed = await kernel.execute(
        f"import pandas as pd; data.to_pickle({str(out)!r}); "
        "data.iloc[:, 0] = data.iloc[:, 0] if len(data.columns) else None; print(len(data))")
    assert changed.status == "ok", changed.error
    return pd.read_pickle(out)


@pytest.mark.asyncio
@pytest.mark.parametrize("hand_off", ["file", "sandboxed", "protocol"])
async def test_the_kernels_dataframe_is_the_artifacts_rows_whatever_the_hand_off(tmp_path, hand_off):
    full, full_print = artifact(tmp_path, "full", ROWS)
    empty, empty_print = artifact(tmp_path, "empty", f"SELECT * FROM ({ROWS}) WHERE n < 0")
    launcher = _Remote() if hand_off == "protocol" else LocalKernelLauncher()
    sandboxed = hand_off == "sandboxed"
    async with KernelSession(tmp_path / "k", launcher=launcher, sandbox=SandboxPolicy(enabled=sandboxed),
                             datasets_root=tmp_path / "ds") as kernel:
        if sandboxed:  # linked into the kernel's read-only datasets folder, as a thread's blob is
            full, empty = kernel.stage(full_print, full), kernel.stage(empty_print, empty)
            assert full.parent == kernel.datasets_dir
        got = await kernel_frame(kernel, full, full_print, kernel.workdir / "full.pkl")
        got_empty = await kernel_frame(kernel, empty, empty_print, kernel.workdir / "empty.pkl")
        full, empty = tmp_path / "full.parquet", tmp_path / "empty.parquet"

    want = expected(full)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert str(got["at_utc"].dtype) == "datetime64[us, UTC]", "the zone is kept"
    assert got["price"].dtype == "float64" and got["price"].iloc[3] == 3.75
    assert got["maybe_price"].isna().sum() == 13 and got["maybe_n"].isna().sum() == 17
    assert got["label"].iloc[1] == "row 1 é ✓" and pd.isna(got["label"].iloc[0])
    assert got["at_utc"].iloc[0] == pd.Timestamp(dt.datetime(2024, 3, 10, 1, 30, tzinfo=dt.UTC))

    pd.testing.assert_frame_equal(got_empty, expected(empty), check_exact=True)
    assert len(got_empty) == 0 and list(got_empty.columns) == list(want.columns)
    assert str(got_empty["at_utc"].dtype) == "datetime64[us, UTC]" and got_empty["price"].dtype == "float64"


def test_the_loader_gives_the_same_frame_for_the_file_and_its_bytes(tmp_path):
    path, _ = artifact(tmp_path, "full", ROWS)
    pd.testing.assert_frame_equal(read_dataset(str(path)), read_dataset(path.read_bytes()), check_exact=True)
    pd.testing.assert_frame_equal(read_dataset(str(path)), expected(path), check_exact=True)


def test_a_result_of_no_columns_loads_as_an_empty_frame(tmp_path):
    path = tmp_path / "none.parquet"
    pq.write_table(pa.table({}), path)
    frame = read_dataset(str(path))
    assert frame.shape == (0, 0)
