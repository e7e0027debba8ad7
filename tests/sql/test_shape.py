"""A query's shape read off its tree: every filter said where it applies, keys resolved."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from jupyter_analyst.sql.intent import LINE_CHARS, OVER, DataIntent, data_intent
from jupyter_analyst.sql.shape import query_shape
from jupyter_analyst.sql.terms import by_name, conditions


def shape(sql: str):
    return query_shape(sqlglot.parse_one(sql, dialect="duckdb"), "duckdb")


def said(sql: str, budget: int = 1000) -> str:
    """The description as the model reads it (whole, unless ``budget`` is given)."""
    return data_intent(shape(sql), tables=["t"], rows=2).line(budget)


def test_a_filter_inside_a_cte_is_said_with_the_cte():
    line = said("WITH jfk AS (SELECT * FROM flights WHERE origin = 'JFK'), "
                "unused AS (SELECT * FROM flights WHERE origin = 'EWR') "
                "SELECT month, AVG(dep_delay) AS delay FROM jfk GROUP BY month")
    # The CTE that is not read does not feed the result: its filter is not the dataset's.
    assert line == "from jfk [flights where origin = 'JFK']; measures: delay = AVG(dep_delay); by: month; 2 rows"


def test_filters_of_nested_ctes_subqueries_having_and_one_sided_join_conditions():
    s = shape(
        "WITH base AS (SELECT * FROM flights WHERE year = 2013), "
        "jfk AS (SELECT * FROM base WHERE origin = 'JFK') "
        "SELECT j.carrier, COUNT(*) AS n FROM jfk j "
        "JOIN airlines a ON j.carrier = a.carrier AND a.name LIKE '%Air%' "
        "JOIN (SELECT tailnum FROM planes WHERE seats > 100) p ON j.tailnum = p.tailnum "
        "WHERE j.month IN (1, 2, 3) GROUP BY 1 HAVING COUNT(*) > 10"
    )
    # The result's own conditions; each CTE's and subquery's with it, aliases said as names.
    assert s.filters == ["jfk.month IN (1, 2, 3)", "airlines.name LIKE '%Air%' (joining airlines)"]
    # HAVING keeps groups, by the measure's name: said as its own clause.
    assert s.having == ["n > 10"]
    line = data_intent(s, tables=["flights"], rows=2).line(1000)
    assert line.startswith("from jfk [base [flights where year = 2013] where origin = 'JFK'] JOIN airlines ON carrier "
                           "JOIN p [planes where seats > 100] ON tailnum;")
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
    sql = ("WITH m AS (SELECT month, AVG(dep_delay) AS delay FROM flights WHERE origin = 'JFK' GROUP BY 1) "
           "SELECT * FROM m ORDER BY delay DESC")
    s = shape(sql)
    assert (s.measures, s.dimensions, s.filters) == (["delay = AVG(dep_delay)"], ["month"], [])
    # The grouping and the measure are said once, as the result's.
    assert said(sql) == "from m [flights where origin = 'JFK']; measures: delay = AVG(dep_delay); by: month; 2 rows"


def test_union_filters_say_which_part_they_belong_to():
    line = said("SELECT carrier FROM flights WHERE dest = 'A' UNION ALL SELECT carrier FROM flights WHERE dest = 'B'")
    assert line == "from UNION ALL of (flights where dest = 'A') and (flights where dest = 'B'); columns: carrier; 2 rows"


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
    assert "shortened to fit (full SQL: find with_code=true)" in line
    # Never cut inside an expression: every parenthesis opened is closed, no dangling ellipsis.
    assert line.count("(") == line.count(")")
    assert not line.rstrip(")").endswith("…")
    # The columns keep their names: none is left out for a line that would not fit anyway.
    assert all(name in line for name in ("measures: flights", "cancelled", "cancelled_pct", "mean_positive_delay"))
    # A line that fits only by dropping definitions may run over its budget (by at most
    # OVER): the columns' definitions are what later questions are answered from.
    assert len(line) <= budget * OVER or budget < LINE_CHARS / 2


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


def test_a_cte_read_by_both_union_parts_is_said_once_and_each_part_maps_its_column():
    line = said("WITH cancelled AS (SELECT * FROM flights WHERE dep_time IS NULL) "
                "SELECT origin AS airport FROM cancelled UNION ALL SELECT dest AS airport FROM cancelled")
    assert line == ("from UNION ALL of (cancelled [flights where dep_time IS NULL]; airport = origin) "
                    "and (cancelled; airport = dest); columns: airport; 2 rows")


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
     "north [orders JOIN regions ON region_id] FULL JOIN products ON product_id", []),
    ("SELECT * FROM a, b WHERE a.x = b.x", "a CROSS JOIN b", ["a.x = b.x"]),
    # A table read twice keeps its aliases, in the joins and in the terms that use them.
    ("SELECT * FROM staff s JOIN staff m ON s.manager_id = m.id WHERE m.grade > 3",
     "staff AS s JOIN staff AS m ON manager_id = id", ["m.grade > 3"]),
    ("SELECT * FROM orders WHERE region_id = 1", "orders", ["region_id = 1"]),
])
def test_joins_are_said_with_their_kind_and_keys(sql, source, filters):
    s = shape(sql)
    assert (said(sql).split("; ")[0], s.filters) == (f"from {source}", filters)


def test_the_filters_that_tell_union_parts_apart_are_said_with_each_part_and_the_shared_ones_once():
    s = shape("SELECT 'a' AS k FROM t WHERE y = 1 AND m = 2 AND d < 0 AND c = 'x' "
              "UNION ALL SELECT 'b' FROM t WHERE y = 1 AND m = 2 AND d > 9 "
              "UNION ALL SELECT 'c' FROM t WHERE y = 1 AND m = 2 AND d > 9 AND e = 3")
    assert s.filters == ["y = 1", "m = 2"]
    line = data_intent(s, tables=["t"], rows=3).line(1000)
    assert line == ("from UNION ALL of (t where d < 0 AND c = 'x'; k = 'a') and (t where d > 9; k = 'b') "
                    "and (t where d > 9 AND e = 3; k = 'c'); columns: k; where: y = 1 AND m = 2; 3 rows")


CANCELLED = (
    "WITH cancelled AS (SELECT origin AS faa, 1 AS as_origin, 0 AS as_dest FROM flights WHERE dep_time IS NULL "
    "UNION ALL SELECT dest AS faa, 0 AS as_origin, 1 AS as_dest FROM flights WHERE dep_time IS NULL AND dest <> 'XXX') "
    "SELECT c.faa, ap.name, SUM(c.as_origin) AS cancelled_departures, SUM(c.as_dest) AS cancelled_arrivals, "
    "COUNT(*) AS cancellations FROM cancelled c LEFT JOIN airports ap ON ap.faa = c.faa "
    "GROUP BY c.faa, ap.name HAVING COUNT(*) > 500 ORDER BY cancellations DESC"
)


def test_a_union_in_a_cte_joined_after_keeps_the_join_each_part_its_filters_and_its_columns():
    line = data_intent(shape(CANCELLED), tables=["airports", "flights"], rows=5).line()
    assert line == (
        "from cancelled [UNION ALL of (flights; faa = origin, as_origin = 1, as_dest = 0) "
        "and (flights where dest <> 'XXX'; faa = dest, as_origin = 0, as_dest = 1), each where dep_time IS NULL] "
        "LEFT JOIN airports ON faa; "
        "measures: cancelled_departures = SUM(cancelled.as_origin), cancelled_arrivals = SUM(cancelled.as_dest), "
        "cancellations = COUNT(*); by: faa, name; having: cancellations > 500; 5 rows"
    )


@pytest.mark.parametrize("sql", [
    CANCELLED,
    # Set operations nested in subqueries, joined, inside CTEs read by other CTEs.
    "WITH a AS (SELECT x, y FROM t1 WHERE p1 = 1 UNION ALL SELECT x, z FROM t2 WHERE p2 = 2), "
    "b AS (SELECT x, COUNT(*) AS n FROM a WHERE p3 = 3 GROUP BY x HAVING COUNT(*) > 4) "
    "SELECT b.x, q.w FROM b JOIN (SELECT x, w FROM t3 WHERE p5 = 5 EXCEPT SELECT x, w FROM t4 WHERE p6 = 6) q "
    "ON q.x = b.x LEFT JOIN t5 ON t5.x = b.x AND t5.p7 = 7 WHERE b.n > 8",
    "SELECT k FROM (SELECT k FROM t1 WHERE p1 = 1 UNION SELECT k FROM t2 WHERE p2 = 2) s1 WHERE p3 = 3 "
    "UNION ALL SELECT k FROM t3 WHERE p4 = 4 UNION ALL SELECT k FROM t4 WHERE p5 = 5 "
    "UNION ALL SELECT k FROM t5 WHERE p6 = 6 QUALIFY ROW_NUMBER() OVER (PARTITION BY k) = 1",
])
def test_every_filter_is_said_once_never_invented_nor_lost(sql):
    tree = sqlglot.parse_one(sql, dialect="duckdb")
    # A HAVING term says an aggregate by its measure's name (COUNT(*) > 500 is cancellations > 500).
    terms = {(by_name(t, node.parent) if isinstance(node, exp.Having) else t).sql(dialect="duckdb")
             for node in tree.find_all(exp.Where, exp.Having, exp.Qualify) for t in conditions(node)}
    line = data_intent(shape(sql), tables=["t"], rows=2).line(1000)
    # A left join's own condition is said with the join.
    for term in [*terms, *(["t5.p7 = 7"] if "t5.p7" in sql else [])]:
        # Said once; a term every part of a set operation has is said once for them all.
        assert line.count(term) == 1, (term, line)


def test_the_parts_of_a_set_operation_past_three_keep_their_own_filters_or_are_counted():
    parts = [f"SELECT '{n}' AS zone, carrier FROM flights WHERE dest = 'D{n}' AND distance > {n * 100} "
             f"AND air_time IS NOT NULL" for n in range(7)]
    s = shape(" UNION ALL ".join(parts))
    whole = data_intent(s, tables=["flights"], rows=9).line(1000)
    for n in range(7):
        assert f"(flights where dest = 'D{n}' AND distance > {n * 100}; zone = '{n}')" in whole
    assert whole.count("air_time") == 1  # every part's: said once, as the result's
    line = data_intent(s, tables=["flights"], rows=9).line(300)
    # Each part kept keeps its first filter (the rest counted); the parts past three are counted.
    assert "(flights where dest = 'D0' AND 1 more; zone = '0') and (flights where dest = 'D1' AND 1 more" in line
    assert "and 4 more parts;" in line and "where: NOT air_time IS NULL" in line and "shortened to fit" in line
    assert line.count("(") == line.count(")")


def test_aliases_are_said_as_the_cte_they_stand_for_and_a_cte_is_said_once():
    line = said("WITH summer AS (SELECT carrier, dep_delay FROM flights WHERE origin = 'JFK' AND month IN (6, 7, 8) "
                "AND dep_delay IS NOT NULL) SELECT s.carrier, a.name, AVG(s.dep_delay) AS avg_dep_delay, "
                "COUNT(*) AS n_flights FROM summer s JOIN airlines a ON a.carrier = s.carrier "
                "GROUP BY s.carrier, a.name ORDER BY avg_dep_delay DESC")
    assert line == ("from summer [flights where origin = 'JFK' AND month IN (6, 7, 8) AND NOT dep_delay IS NULL] "
                    "JOIN airlines ON carrier; measures: avg_dep_delay = AVG(summer.dep_delay), n_flights = COUNT(*); "
                    "by: carrier, name; 2 rows")
    assert "(in summer)" not in line


@pytest.mark.parametrize(("sql", "expected"), [
    ("WITH ranked AS (SELECT tailnum, year, RANK() OVER (ORDER BY year) AS age_rank FROM planes "
     "WHERE year IS NOT NULL) SELECT tailnum, year FROM ranked WHERE age_rank <= 3",
     "from ranked [planes where NOT year IS NULL; age_rank = RANK() OVER (ORDER BY year)]; columns: tailnum, year; "
     "where: age_rank <= 3; 2 rows"),
    # A measure of a CTE that the query aggregates again: what it counts, and by what.
    ("WITH daily AS (SELECT day, COUNT(*) AS n FROM flights GROUP BY day HAVING COUNT(*) > 5) "
     "SELECT AVG(n) AS avg_daily FROM daily",
     "from daily [flights by day having n > 5; n = COUNT(*)]; measures: avg_daily = AVG(n); 2 rows"),
    # A LIMIT in a CTE keeps some of its rows: which, and by what.
    ("WITH top AS (SELECT carrier, AVG(dep_delay) AS d FROM flights GROUP BY 1 ORDER BY d DESC LIMIT 3) "
     "SELECT f.month, COUNT(*) AS n FROM flights f JOIN top t ON f.carrier = t.carrier GROUP BY 1",
     "from flights JOIN top [flights by carrier, first 3 by d DESC; d = AVG(dep_delay)] ON carrier; "
     "measures: n = COUNT(*); by: month; 2 rows"),
    ("SELECT carrier, AVG(dep_delay) AS d FROM flights GROUP BY 1 ORDER BY d DESC LIMIT 5",
     "from flights; measures: d = AVG(dep_delay); by: carrier; first 5 by d DESC; 2 rows"),
    # EXCEPT is not a union: which part is taken away is said.
    ("SELECT a FROM t WHERE x = 1 EXCEPT SELECT a FROM t WHERE y = 2",
     "from (t where x = 1) EXCEPT (t where y = 2); columns: a; 2 rows"),
    # A CTE read only inside a condition: its own filter is part of what that condition means.
    ("WITH jfk AS (SELECT * FROM flights WHERE origin = 'JFK') "
     "SELECT carrier, COUNT(*) AS n FROM flights WHERE tailnum IN (SELECT tailnum FROM jfk) GROUP BY 1",
     "from flights; with jfk [flights where origin = 'JFK']; measures: n = COUNT(*); by: carrier; "
     "where: tailnum IN (SELECT tailnum FROM jfk); 2 rows"),
])
def test_a_computed_column_the_query_uses_is_defined_where_it_is_made(sql, expected):
    assert said(sql) == expected


def test_a_chain_of_ctes_far_over_its_budget_names_them_and_says_it_was_cut():
    ctes = ", ".join(f"c{n} AS (SELECT * FROM {f'c{n - 1}' if n else 'flights'} WHERE distance > {n * 100} "
                     f"AND air_time > {n} AND carrier <> 'X{n}')" for n in range(12))
    line = said(f"WITH {ctes} SELECT carrier, COUNT(*) AS n FROM c11 GROUP BY 1", 300)
    # A cut a later one made needless is taken back (the measure is whole again).
    assert line.startswith("from c11 […]; measures: n = COUNT(*); by: carrier; 2 rows; shortened to fit")
    whole = said(f"WITH {ctes} SELECT carrier, COUNT(*) AS n FROM c11 GROUP BY 1")
    assert all(f"distance > {n * 100}" in whole for n in range(12))


@pytest.mark.parametrize(("sql", "expected"), [
    # A LATERAL subquery's filters are its own, said with it.
    ("SELECT * FROM orders, LATERAL (SELECT * FROM regions WHERE regions.region_id = orders.region_id "
     "AND region <> 'X') AS l",
     "from orders CROSS JOIN LATERAL l [regions where regions.region_id = orders.region_id AND region <> 'X']"),
    # A recursive CTE: its seed, a SELECT of values, as written; the recursion by the CTE's name.
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT n FROM r WHERE n > 2",
     "from r [UNION ALL of (SELECT 1) and (r where n < 10)]"),
    ("WITH p AS (PIVOT orders ON region_id USING SUM(revenue) GROUP BY product_id) SELECT * FROM p",
     "from p [PIVOT orders ON region_id USING SUM(revenue) GROUP BY product_id]"),
])
def test_what_is_not_a_select_of_a_table_is_said_as_written(sql, expected):
    assert said(sql).split("; ")[0] == expected


@pytest.mark.parametrize(("sql", "expected"), [
    ("WITH used AS (SELECT DISTINCT tailnum FROM flights WHERE origin = 'JFK') SELECT COUNT(*) AS n FROM used",
     "from used [flights where origin = 'JFK', distinct rows]; measures: n = COUNT(*); 2 rows"),
    ("WITH latest AS (SELECT DISTINCT ON (region_id) region_id, revenue FROM orders "
     "ORDER BY region_id, order_date DESC) SELECT SUM(revenue) AS r FROM latest",
     "from latest [orders, distinct on (region_id) first by region_id, order_date DESC]; "
     "measures: r = SUM(revenue); 2 rows"),
    ("SELECT DISTINCT ON (region_id) region_id, revenue FROM orders ORDER BY region_id, revenue DESC",
     "from orders; columns: region_id, revenue; distinct on (region_id) first by region_id, revenue DESC; 2 rows"),
])
def test_a_distinct_that_keeps_one_row_of_each_is_said(sql, expected):
    assert said(sql) == expected


# --- relay pass 4: what the model reads --------------------------------------------------

RANKED = ("WITH summer AS (SELECT * FROM flights WHERE origin = 'JFK' AND month IN (6, 7, 8)), "
          "by_carrier AS (SELECT carrier, AVG(dep_delay) AS avg_dep_delay, COUNT(*) AS n_flights "
          "FROM summer GROUP BY carrier), "
          "ranked AS (SELECT *, RANK() OVER (ORDER BY avg_dep_delay DESC) AS delay_rank FROM by_carrier) "
          "SELECT r.carrier, a.name, r.avg_dep_delay, r.n_flights, r.delay_rank "
          "FROM ranked r LEFT JOIN airlines a ON r.carrier = a.carrier WHERE r.delay_rank <= 5")


@pytest.mark.parametrize("sql, definitions", [
    (RANKED, ["avg_dep_delay = AVG(dep_delay)", "n_flights = COUNT(*)",
              "delay_rank = RANK() OVER (ORDER BY avg_dep_delay DESC)"]),
    ("SELECT * FROM (SELECT *, RANK() OVER (ORDER BY year ASC) AS age_rank FROM planes "
     "WHERE year IS NOT NULL) x WHERE age_rank = 1", ["age_rank = RANK() OVER (ORDER BY year ASC)"]),
])
def test_a_measure_passed_through_from_a_cte_is_defined_once(sql, definitions):
    line = said(sql)
    for definition in definitions:
        assert line.count(definition) == 1, line
        # The result still names it as one of its columns.
        assert definition.split(" = ")[0] in line.split("measures: ", 1)[1]


SHARES = ("SELECT origin, month, COUNT(*) AS scheduled, AVG(dep_delay) AS avg_dep_delay, "
          "AVG(CASE WHEN dep_delay <= 15 THEN 1.0 ELSE 0.0 END) FILTER (WHERE dep_delay IS NOT NULL) AS on_time_share, "
          "AVG(CASE WHEN dep_time IS NULL THEN 1.0 ELSE 0.0 END) AS cancel_rate FROM flights GROUP BY origin, month")
PER_CARRIER = ("WITH per_carrier AS (SELECT carrier, COUNT(*) AS scheduled, AVG(dep_delay) AS avg_dep_delay, "
               "AVG(CASE WHEN dep_delay <= 15 THEN 1.0 ELSE 0.0 END) FILTER (WHERE dep_delay IS NOT NULL) "
               "AS on_time_share FROM flights GROUP BY carrier) "
               "SELECT p.carrier, a.name, p.scheduled, p.avg_dep_delay, p.on_time_share "
               "FROM per_carrier p LEFT JOIN airlines a USING (carrier)")


@pytest.mark.parametrize("sql", [SHARES, PER_CARRIER])
def test_every_measure_is_defined_at_the_default_budget(sql):
    line = data_intent(shape(sql), tables=["flights"], rows=36).line()
    assert "dep_delay <= 15" in line  # what on time means
    assert "scheduled = COUNT(*)" in line and "shortened" not in line
    if sql == SHARES:
        assert "cancel_rate = AVG(CASE WHEN dep_time IS NULL THEN 1.0 ELSE 0.0 END)" in line
        # The measure's own FILTER is said in its definition, not again under "where:".
        assert "where:" not in line and line.count("NOT dep_delay IS NULL") == 1


def test_a_measure_named_after_its_bracket_is_defined_where_the_bracket_is_elided():
    line = data_intent(shape(PER_CARRIER), tables=["flights"], rows=36)
    line.source.reads[0].body.columns.extend(f"pad{n} = {'x' * 40}" for n in range(12))  # a long bracket
    text = line.line()
    assert "per_carrier […]" in text and "scheduled = COUNT(*)" in text and "dep_delay <= 15" in text


def test_a_long_case_measure_keeps_its_comparison_when_shortened():
    from jupyter_analyst.sql.terms import brief
    case = "AVG(CASE WHEN dep_delay <= 15 THEN 1.0 ELSE 0.0 END) FILTER(WHERE NOT dep_delay IS NULL)"
    assert brief(sqlglot.parse_one(case, dialect="duckdb"), "duckdb", 84) == (
        "AVG(CASE WHEN dep_delay <= 15 THEN … ELSE … END) FILTER(WHERE NOT dep_delay IS NULL)")


@pytest.mark.parametrize(("sql", "join"), [
    # A cast on both sides of one column keys on that column, never "… = …" unmarked.
    ("SELECT f.origin, w.temp, AVG(f.dep_delay) AS d FROM flights f JOIN weather w ON w.origin = f.origin "
     "AND CAST(w.time_hour AS TIMESTAMP) = CAST(f.time_hour AS TIMESTAMP) GROUP BY 1, 2",
     "from flights JOIN weather ON origin, time_hour;"),
    ("SELECT f.origin, AVG(f.dep_delay) AS d FROM flights f JOIN weather w "
     "ON w.origin = f.origin AND w.hour + 1 = f.hour GROUP BY 1",
     "from flights JOIN weather ON origin AND weather.hour + 1 = flights.hour;"),
])
def test_a_join_key_is_never_elided(sql, join):
    assert said(sql).startswith(join)


def test_a_using_join_keeps_its_key_when_the_line_is_cut():
    ctes = ", ".join(f"c{n} AS (SELECT * FROM {f'c{n - 1}' if n else 'flights'} WHERE distance > {n * 100} "
                     f"AND air_time > {n} AND carrier <> 'X{n}')" for n in range(12))
    line = said(f"WITH {ctes} SELECT c11.carrier, a.name, COUNT(*) AS n FROM c11 "
                "LEFT JOIN airlines a USING (carrier) GROUP BY 1, 2", 300)
    assert "shortened to fit" in line and "LEFT JOIN airlines USING (carrier);" in line


def test_having_is_its_own_clause_and_says_the_measure_by_name():
    line = said("SELECT dest, COUNT(*) AS cancelled_flights, RANK() OVER (ORDER BY COUNT(*) DESC) AS cancel_rank "
                "FROM flights WHERE dep_time IS NULL GROUP BY dest HAVING COUNT(*) > 500")
    # Groups kept, not rows: never AND-ed to the WHERE; the aggregate said as the column it is.
    assert "where: dep_time IS NULL; having: cancelled_flights > 500;" in line
    assert "cancel_rank = RANK() OVER (ORDER BY cancelled_flights DESC)" in line
    assert "(HAVING)" not in line


def test_a_computed_key_keeps_its_definition_before_filters_are_counted():
    filters = " AND ".join(f"distance <> {n * 1111}" for n in range(30))
    line = said("SELECT date_trunc('month', CAST(time_hour AS TIMESTAMP)) AS month, COUNT(*) AS n "
                f"FROM flights WHERE {filters} GROUP BY 1", LINE_CHARS)
    assert "by: month = DATE_TRUNC('MONTH', CAST(time_hour AS TIMESTAMP))" in line and " more;" in line
