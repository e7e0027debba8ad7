"""How a dataset's Parquet file becomes a pandas DataFrame, in the kernel that reads it.

One function for the agent's kernel (its source is sent to the kernel once, as a module of
its own: the kernel need not import this package, and the model's namespace gets no new
name) and for ``analyst.sql`` in a re-executed notebook, so both hold the same DataFrame
for the same file.

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


def read_dataset(path: str | bytes) -> "pd.DataFrame":  # noqa: F821 - also defined where pandas is not imported
    """The pandas DataFrame of the Parquet file at ``path`` (or of its bytes, received over
    the kernel protocol by a kernel that cannot read the host's disk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pa.BufferReader(path) if isinstance(path, bytes) else path
    table = pq.ParquetFile(source, memory_map=True).read()
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.float64()))
    return table.to_pandas(self_destruct=True, split_blocks=True)


#: The module the loader lives in, in the kernel (not in the namespace the model's code sees).
MODULE = "_jupyter_analyst_loader"


@cache
def definition() -> str:
    """Code that defines the loader in a kernel, as the module :data:`MODULE`, leaving no name."""
    source = inspect.getsource(read_dataset)
    return (
        "import sys as _analyst_sys, types as _analyst_types\n"
        f"_analyst_sys.modules[{MODULE!r}] = _analyst_types.ModuleType({MODULE!r})\n"
        f"exec({source!r}, _analyst_sys.modules[{MODULE!r}].__dict__)\n"
        "del _analyst_sys, _analyst_types\n"
    )


def load_code(name: str, path: Path | str, *, define: bool = True) -> str:
    """The cell that makes ``name`` the DataFrame of ``path`` in a kernel; with ``define``
    it defines the loader first (once per kernel is enough: then the cell is one line).

    >>> load_code("sales", "/data/ab12", define=False)
    "sales = __import__('_jupyter_analyst_loader').read_dataset('/data/ab12')"
    """
    line = f"{name} = __import__({MODULE!r}).read_dataset({str(path)!r})"
    return definition() + line if define else line
