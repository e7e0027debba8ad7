"""How a dataset's Parquet file becomes a pandas DataFrame, in the kernel that reads it.

One function for the agent's kernel (its source is sent in the load cell: the kernel need
not import this package) and for ``analyst.sql`` in a re-executed notebook, so both hold
the same DataFrame for the same file.

Without a second full copy: the file is memory-mapped, and each Arrow column is released
as soon as it has become a pandas column (``self_destruct``), into blocks of their own
(``split_blocks``: no consolidation copy). DECIMAL columns arrive as float64, as DuckDB's
own ``.df()`` gives them (Python ``Decimal`` objects are slow to make, to compute on and to
plot); the stored Parquet keeps the exact decimals.
"""

from __future__ import annotations

import inspect
from functools import cache
from pathlib import Path


def read_dataset(path: str) -> "pd.DataFrame":  # noqa: F821 - also defined where pandas is not imported
    """The pandas DataFrame of the Parquet file at ``path``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path, memory_map=True).read()
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.float64()))
    return table.to_pandas(self_destruct=True, split_blocks=True)


@cache
def _function_source() -> str:
    return inspect.getsource(read_dataset).replace("def read_dataset(", "def _analyst_read_dataset(", 1)


def load_code(name: str, path: Path | str) -> str:
    """The cell that makes ``name`` the DataFrame of ``path`` in a kernel, leaving no other name.

    >>> print(load_code("sales", "/data/ab12").splitlines()[-2:])
    ["sales = _analyst_read_dataset('/data/ab12')", 'del _analyst_read_dataset']
    """
    return f"{_function_source()}\n{name} = _analyst_read_dataset({str(path)!r})\ndel _analyst_read_dataset\n"
