"""The source as the model's system message outlines it: which tables are listed.

The schema section of every prompt lists the source's tables and their columns; a source
with more tables than it lists is browsed through ``list_tables`` (only then offered to the
model) or ``find``.
"""

from __future__ import annotations

#: How many tables of the source the system message lists.
OUTLINE_TABLES = 40
#: How many columns per table it lists.
OUTLINE_COLUMNS = 40
