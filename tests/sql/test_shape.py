"""A query's shape read off its tree: every filter that feeds the result, keys resolved."""

from __future__ import annotations

import pytest
import sqlglot

from jupyter_analyst.sql.intent import DataIntent, data_intent
from jupyter_analyst.sql.shape import query_shape


def shape(sql: str):
    return query_shape(sqlglot.parse_one(sql, dialect="duckdb"), "duckdb")


def test_a_filter_inside_a_cte_is_a_filter_of_the_result():
    s = shape("WITH jfk AS (SELECT * FROM flights WHERE origin = 'JFK'), "
              "unused AS (SELECT * FROM flights WHERE origin = 'EWR') "
              "SELECT month, AVG(dep_delay) AS delay FROM jfk GROUP BY month")
    # The CTE that is not read does not feed the result: its filter is not the dataset's.
    assert s.filters == ["origin = 'JFK' (in jfk)"]


def test_filters_of_nested_ctes_subqueries_having_and_one_sided_join_conditions():
    s = shape(
        "WITH base AS (SELECT * FROM flights WHERE year = 2013), "
        "jfk AS (SELECT * FROM base WHERE origin = 'JFK') "
        "SELECT j.carrier, COUNT(*) AS n FROM jfk j "
        "JOIN airlines a ON j.carrier = a.carrier AND a.name LIKE '%Air%' "
        "JOIN (SELECT tailnum FROM planes WHERE seats > 100) p ON j.tailnum = p.tailnum "
        "WHERE j.month IN (1, 2, 3) GROUP BY 1 HAVING COUNT(*) > 10"
    )
    assert s.filters == [
        "j.month IN (1, 2, 3)",
        "airlines.name LIKE '%Air%' (joining airlines)",
        "COUNT(*) > 10 (HAVING)",
        "origin = 'JFK' (in jfk)",
        "year = 2013 (in base)",
        "seats > 100 (in p)",
    ]
    # The join keys are not filters.
    assert not any("a.carrier" in f or "airlines.carrier" in f for f in s.filters)


@pytest.mark.parametrize(("sql", "dimensions"), [
    ("SELECT DATE_TRUNC('month', d) AS month, SUM(x) AS total FROM t GROUP BY 1", ["month = DATE_TRUNC('MONTH', d)"]),
    ("SELECT DATE_TRUNC('month', d) AS month, SUM(x) AS total FROM t GROUP BY month",
     ["month = DATE_TRUNC('MONTH', d)"]),
    ("SELECT f.origin, SUM(x) AS total FROM t AS f GROUP BY 1", ["origin"]),
    ("SELECT origin, dest, SUM(x) AS total FROM t GROUP BY ALL", ["origin", "dest"]),
    ("SELECT carrier, COUNT(*) AS n FROM t GROUP BY ROLLUP (carrier)", ["carrier (ROLLUP: with subtotals)"]),
])
def test_grouping_keys_are_resolved_from_ordinals_and_aliases(sql, dimensions):
    assert shape(sql).dimensions == dimensions


def test_a_query_reselecting_a_grouped_cte_keeps_its_measures_and_keys():
    s = shape("WITH m AS (SELECT month, AVG(dep_delay) AS delay FROM flights WHERE origin = 'JFK' GROUP BY 1) "
              "SELECT * FROM m ORDER BY delay DESC")
    assert (s.measures, s.dimensions, s.filters) == (["delay = AVG(dep_delay)"], ["month"], ["origin = 'JFK' (in m)"])


def test_union_filters_say_which_part_they_belong_to():
    s = shape("SELECT carrier FROM flights WHERE dest = 'A' UNION ALL SELECT carrier FROM flights WHERE dest = 'B'")
    assert s.filters == ["dest = 'A' (UNION part 1 only)", "dest = 'B' (UNION part 2 only)"]


LONG = ("SELECT f.carrier, COUNT(*) AS flights, "
        "SUM(CASE WHEN f.dep_time IS NULL AND f.arr_time IS NULL AND f.dep_delay IS NULL THEN 1 ELSE 0 END) "
        "AS cancelled, "
        "ROUND(100.0 * SUM(CASE WHEN f.dep_time IS NULL AND f.arr_time IS NULL THEN 1 ELSE 0 END) / COUNT(*), 2) "
        "AS cancelled_pct, AVG(CASE WHEN f.dep_delay > 0 THEN f.dep_delay END) AS mean_positive_delay "
        "FROM flights f JOIN airlines a ON f.carrier = a.carrier "
        "WHERE f.month IN (1, 2, 3, 4, 5, 6) AND f.origin <> 'LGA' GROUP BY 1")


@pytest.mark.parametrize("budget", [300, 200, 150, 120])
def test_a_long_description_is_cut_by_whole_parts_keeping_the_filters(budget):
    line = data_intent(shape(LONG), tables=["flights", "airlines"], rows=16).line(budget)
    assert "where: flights.month IN (1, 2, 3, 4, 5, 6) AND flights.origin <> 'LGA'" in line
    assert "shortened to fit (full SQL: list_artifacts with_code=true)" in line
    # Never cut inside an expression: every parenthesis opened is closed, no dangling ellipsis.
    assert line.count("(") == line.count(")")
    assert not line.rstrip(")").endswith("…")
    assert len(line) <= budget or budget < 160


def test_a_short_description_is_whole_and_says_nothing_was_cut():
    line = DataIntent(tables=["t"], measures=["n = COUNT(*)"], filters=["x > 1"], rows=1).line()
    assert line == "from t; measures: n = COUNT(*); where: x > 1; 1 row"


def test_many_filters_keep_the_first_ones_and_say_how_many_more():
    filters = [f"c{n} = {n}" for n in range(40)]
    line = DataIntent(tables=["t"], filters=filters, rows=1).line(120)
    assert "where: c0 = 0 AND c1 = 1 AND c2 = 2 AND 37 more" in line
    assert "shortened to fit" in line


@pytest.mark.parametrize(("sql", "columns"), [
    ("SELECT * FROM orders WHERE order_id <= 2000", "columns: *"),
    ("SELECT region, revenue FROM orders WHERE revenue > 0", "columns: region, revenue"),
])
def test_a_row_level_query_lists_its_columns_not_a_grouping_it_does_not_have(sql, columns):
    line = data_intent(shape(sql), tables=["orders"], rows=7).line(300)
    assert columns in line and "by:" not in line


def test_a_cte_read_by_both_union_parts_gives_its_filter_once():
    s = shape("WITH cancelled AS (SELECT * FROM flights WHERE dep_time IS NULL) "
              "SELECT origin AS airport FROM cancelled UNION ALL SELECT dest AS airport FROM cancelled")
    assert s.filters.count("dep_time IS NULL (in cancelled)") == 1


def test_one_row_is_one_row():
    assert data_intent(shape("SELECT COUNT(*) AS n FROM orders"), tables=["orders"], rows=1).line(300).endswith("1 row")


def test_an_aggregate_filter_is_a_filter_of_its_measure():
    s = shape("SELECT origin, ROUND(100.0 * COUNT(*) FILTER (WHERE dep_time IS NULL) / COUNT(*), 2) AS cancelled_pct, "
              "AVG(CASE WHEN arr_delay <= 15 THEN 1 ELSE 0 END) AS on_time FROM flights GROUP BY origin")
    assert "dep_time IS NULL (in cancelled_pct only)" in s.filters


@pytest.mark.parametrize(("sql", "source", "filters"), [
    ("SELECT * FROM flights f LEFT JOIN planes p ON f.tailnum = p.tailnum AND p.year > 2000",
     "flights LEFT JOIN planes ON tailnum AND planes.year > 2000", []),
    # An inner join's one-sided condition drops rows: a filter, as before.
    ("SELECT * FROM flights f JOIN airports a ON f.dest = a.faa AND a.tz = -5",
     "flights JOIN airports ON dest = faa", ["airports.tz = -5 (joining airports)"]),
    ("SELECT * FROM orders JOIN regions USING (region_id)", "orders JOIN regions USING (region_id)", []),
    ("WITH north AS (SELECT * FROM orders o JOIN regions r ON o.region_id = r.region_id) "
     "SELECT * FROM north n FULL JOIN products p ON n.product_id = p.product_id",
     "(orders JOIN regions ON region_id) FULL JOIN products ON product_id", []),
    ("SELECT * FROM a, b WHERE a.x = b.x", "a CROSS JOIN b", ["a.x = b.x"]),
    ("SELECT * FROM staff s JOIN staff m ON s.manager_id = m.id", "staff AS s JOIN staff AS m ON manager_id = id", []),
    ("SELECT * FROM orders WHERE region_id = 1", "", ["region_id = 1"]),
])
def test_joins_are_said_with_their_kind_and_keys(sql, source, filters):
    s = shape(sql)
    assert (s.source, s.filters) == (source, filters)


def test_the_filters_that_tell_union_parts_apart_come_first_each_part_in_turn():
    s = shape("SELECT 'a' AS k FROM t WHERE y = 1 AND m = 2 AND d < 0 AND c = 'x' "
              "UNION ALL SELECT 'b' FROM t WHERE y = 1 AND m = 2 AND d > 9 "
              "UNION ALL SELECT 'c' FROM t WHERE y = 1 AND m = 2 AND d > 9 AND e = 3")
    assert s.filters == ["d < 0 (UNION part 1 only)", "d > 9 (UNION parts 2, 3 only)", "e = 3 (UNION part 3 only)",
                         "c = 'x' (UNION part 1 only)", "y = 1", "m = 2"]
    line = data_intent(s, tables=["t"], rows=3).line(150)
    assert "where: d < 0 (UNION part 1 only) AND d > 9 (UNION parts 2, 3 only) AND e = 3 (UNION part 3 only) AND 3 more" in line
