"""TPC-H data made offline, in DuckDB SQL, and the 22 standard queries.

DuckDB's ``tpch`` extension is not bundled with the Python package, and its PyPI wheel
(``duckdb-ext-tpch``) is built for another DuckDB version than ours, so the data is made
here: the TPC-H schema, cardinalities (``SF`` x 10,000 suppliers, 200,000 parts, 800,000
part-suppliers, 150,000 customers, 1,500,000 orders, ~6,000,000 line items; 25 nations in
5 regions) and value domains (dates, flags, segments, priorities, types, containers,
brands, colours in part names, phone country codes, comment words the queries look for),
with pseudo-random values from ``hash`` (the same database every time). Foreign keys hold
as dbgen's do: a line item's supplier is one of its part's four, a third of the customers
have no orders, order keys are sparse, an order's status and total follow from its lines.
The values are not dbgen's, so the answers differ from the published ones; every query
returns rows.

The database is cached (see :func:`database`), so only the first run pays for it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb

#: Bumped when the generator changes, so a cached database of another version is not reused.
VERSION = 1

_NATIONS = [
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
    ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2),
    ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2), ("ROMANIA", 3),
    ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3), ("UNITED STATES", 1),
]
_REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
_COLORS = (
    "almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished chartreuse "
    "chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick floral forest "
    "frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace lavender lawn lemon light "
    "lime linen magenta maroon medium metallic midnight mint misty moccasin navajo navy olive orange orchid pale "
    "papaya peach peru pink plum powder puff purple red rose rosy royal saddle salmon sandy seashell sienna sky "
    "slate smoke snow spring steel tan thistle tomato turquoise violet wheat white yellow"
).split()
_WORDS = (
    "furiously quickly carefully blithely slyly ironic final regular express special pending bold even silent "
    "unusual deposits requests accounts packages instructions theodolites foxes pinto beans asymptotes ideas "
    "platelets dependencies excuses sleep wake nag haggle cajole detect integrate use boost affix among above "
    "according across after against along"
).split()


def _list(values: list[str]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


def _script(sf: float) -> list[str]:
    """The statements that make the eight tables at scale factor ``sf``."""
    suppliers, parts, customers, orders = (max(1, int(n * sf)) for n in (10_000, 200_000, 150_000, 1_500_000))
    clerks = max(1, int(1_000 * sf))
    nations = ", ".join(f"({i}, '{n}', {r})" for i, (n, r) in enumerate(_NATIONS))
    regions = ", ".join(f"({i}, '{n}')" for i, n in enumerate(_REGIONS))
    words, colors = _list(_WORDS), _list(_COLORS)
    # r(k, salt, lo, hi): a pseudo-random whole number in [lo, hi] for key k.
    return [
        "CREATE MACRO r(k, salt, lo, hi) AS lo + (hash(k, salt) % (hi - lo + 1))::BIGINT",
        f"CREATE MACRO pick(k, salt, xs) AS xs[1 + (hash(k, salt) % len(xs))::BIGINT]",
        f"CREATE MACRO wordy(k, salt, n) AS array_to_string(list_transform(range(n), lambda i: "
        f"pick(k, salt || i::VARCHAR, {words})), ' ')",
        "CREATE MACRO money(k, salt, lo, hi) AS (r(k, salt, lo, hi) / 100)::DECIMAL(15, 2)",
        "CREATE MACRO phone(k, nation) AS (nation + 10)::VARCHAR || '-' || r(k, 'p1', 100, 999)::VARCHAR || '-' "
        "|| r(k, 'p2', 100, 999)::VARCHAR || '-' || r(k, 'p3', 1000, 9999)::VARCHAR",
        "CREATE MACRO retail(p) AS ((90000 + ((p // 10) % 20001) + 100 * (p % 1000)) / 100)::DECIMAL(15, 2)",
        # A part's i-th supplier (i in 0..3), as dbgen pairs them.
        f"CREATE MACRO supp(p, i) AS ((p + i * ({suppliers} // 4 + (p - 1) // {suppliers})) % {suppliers}) + 1",
        f"CREATE TABLE region AS SELECT k::INTEGER AS r_regionkey, n AS r_name, wordy(k, 'rc', 8) AS r_comment "
        f"FROM (VALUES {regions}) AS v(k, n)",
        f"CREATE TABLE nation AS SELECT k::INTEGER AS n_nationkey, n AS n_name, r::INTEGER AS n_regionkey, "
        f"wordy(k, 'nc', 8) AS n_comment FROM (VALUES {nations}) AS v(k, n, r)",
        f"""CREATE TABLE supplier AS SELECT k::INTEGER AS s_suppkey, printf('Supplier#%09d', k) AS s_name,
            md5(k::VARCHAR)[:r(k, 'sa', 10, 30)] AS s_address, r(k, 'sn', 0, 24)::INTEGER AS s_nationkey,
            phone(k, r(k, 'sn', 0, 24)) AS s_phone, money(k, 'sb', -99999, 999999) AS s_acctbal,
            CASE WHEN k % 2000 = 7 THEN wordy(k, 'sc', 3) || ' Customer ' || wordy(k, 'sd', 2) || ' Complaints'
                 ELSE wordy(k, 'sc', 8) END AS s_comment
            FROM range(1, {suppliers} + 1) AS t(k)""",
        f"""CREATE TABLE part AS SELECT k::INTEGER AS p_partkey,
            array_to_string(list_transform(range(5), lambda i: pick(k, 'pn' || i::VARCHAR, {colors})), ' ') AS p_name,
            'Manufacturer#' || r(k, 'pm', 1, 5)::VARCHAR AS p_mfgr,
            'Brand#' || r(k, 'pm', 1, 5)::VARCHAR || r(k, 'pb', 1, 5)::VARCHAR AS p_brand,
            pick(k, 't1', ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO']) || ' '
              || pick(k, 't2', ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED']) || ' '
              || pick(k, 't3', ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER']) AS p_type,
            r(k, 'ps', 1, 50)::INTEGER AS p_size,
            pick(k, 'c1', ['SM', 'LG', 'MED', 'JUMBO', 'WRAP']) || ' '
              || pick(k, 'c2', ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM']) AS p_container,
            retail(k) AS p_retailprice, wordy(k, 'pc', 4) AS p_comment
            FROM range(1, {parts} + 1) AS t(k)""",
        f"""CREATE TABLE partsupp AS SELECT p::INTEGER AS ps_partkey, supp(p, i)::INTEGER AS ps_suppkey,
            r(p * 4 + i, 'pa', 1, 9999)::INTEGER AS ps_availqty, money(p * 4 + i, 'pp', 100, 100000) AS ps_supplycost,
            wordy(p * 4 + i, 'pc', 10) AS ps_comment
            FROM range(1, {parts} + 1) AS t(p), range(4) AS s(i)""",
        f"""CREATE TABLE customer AS SELECT k::INTEGER AS c_custkey, printf('Customer#%09d', k) AS c_name,
            md5(k::VARCHAR)[:r(k, 'ca', 10, 30)] AS c_address, r(k, 'cn', 0, 24)::INTEGER AS c_nationkey,
            phone(k, r(k, 'cn', 0, 24)) AS c_phone, money(k, 'cb', -99999, 999999) AS c_acctbal,
            pick(k, 'cs', ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD']) AS c_mktsegment,
            wordy(k, 'cc', 10) AS c_comment
            FROM range(1, {customers} + 1) AS t(k)""",
        # Sparse order keys (8 of every 32); customers whose key divides by 3 have no orders.
        f"""CREATE TEMP TABLE o AS SELECT (((i - 1) // 8) * 32 + (i - 1) % 8 + 1)::BIGINT AS k,
            (CASE WHEN r(i, 'oc', 1, {customers}) % 3 = 0 THEN r(i, 'oc', 1, {customers}) % {customers} + 1
                  ELSE r(i, 'oc', 1, {customers}) END)::INTEGER AS cust,
            DATE '1992-01-01' + r(i, 'od', 0, 2405)::INTEGER AS odate,
            r(i, 'ol', 1, 7) AS nlines,
            pick(i, 'op', ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW']) AS priority,
            printf('Clerk#%09d', r(i, 'ok', 1, {clerks})) AS clerk, wordy(i, 'cm', 6) AS comment
            FROM range(1, {orders} + 1) AS t(i)""",
        f"""CREATE TABLE lineitem AS
            WITH l AS (
              SELECT o.k, o.odate, n, o.k * 8 + n AS lk, r(o.k * 8 + n, 'lp', 1, {parts}) AS part,
                     r(o.k * 8 + n, 'lq', 1, 50) AS qty,
                     o.odate + r(o.k * 8 + n, 'ls', 1, 121)::INTEGER AS ship
              FROM o, range(1, 8) AS t(n) WHERE n <= o.nlines)
            SELECT k AS l_orderkey, part::INTEGER AS l_partkey, supp(part, r(lk, 'lu', 0, 3))::INTEGER AS l_suppkey,
              n::INTEGER AS l_linenumber, qty::DECIMAL(15, 2) AS l_quantity,
              (qty * retail(part))::DECIMAL(15, 2) AS l_extendedprice,
              (r(lk, 'lc', 0, 10) / 100)::DECIMAL(15, 2) AS l_discount,
              (r(lk, 'lt', 0, 8) / 100)::DECIMAL(15, 2) AS l_tax,
              CASE WHEN ship + r(lk, 'lr', 1, 30)::INTEGER <= DATE '1995-06-17'
                   THEN pick(lk, 'lf', ['R', 'A']) ELSE 'N' END AS l_returnflag,
              CASE WHEN ship > DATE '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus,
              ship AS l_shipdate, odate + r(lk, 'lm', 30, 90)::INTEGER AS l_commitdate,
              ship + r(lk, 'lr', 1, 30)::INTEGER AS l_receiptdate,
              pick(lk, 'li', ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN']) AS l_shipinstruct,
              pick(lk, 'lo', ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB']) AS l_shipmode,
              wordy(lk, 'lx', 4) AS l_comment
            FROM l ORDER BY l_orderkey, l_linenumber""",
        """CREATE TABLE orders AS SELECT o.k AS o_orderkey, o.cust AS o_custkey,
            CASE WHEN bool_and(l_linestatus = 'F') THEN 'F' WHEN bool_and(l_linestatus = 'O') THEN 'O' ELSE 'P' END
              AS o_orderstatus,
            sum(l_extendedprice * (1 + l_tax) * (1 - l_discount))::DECIMAL(15, 2) AS o_totalprice,
            o.odate AS o_orderdate, o.priority AS o_orderpriority, o.clerk AS o_clerk, 0 AS o_shippriority,
            o.comment AS o_comment
            FROM o JOIN lineitem ON l_orderkey = o.k
            GROUP BY ALL ORDER BY o_orderkey""",
        "DROP TABLE o",
        "DROP MACRO supp", "DROP MACRO retail", "DROP MACRO phone", "DROP MACRO money", "DROP MACRO wordy",
        "DROP MACRO pick", "DROP MACRO r",
    ]


def cache_dir() -> Path:
    """Where generated databases are kept (``JUPYTER_ANALYST_BENCH_CACHE``, else the temp folder)."""
    folder = os.environ.get("JUPYTER_ANALYST_BENCH_CACHE") or Path(tempfile.gettempdir()) / "jupyter-analyst-bench"
    return Path(folder)


def database(sf: float) -> Path:
    """A TPC-H database at scale factor ``sf``, made on first use and cached."""
    path = cache_dir() / f"tpch-v{VERSION}-sf{sf:g}.duckdb"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.unlink(missing_ok=True)
    with duckdb.connect(str(partial)) as conn:
        conn.execute("SET enable_progress_bar = false")
        for statement in _script(sf):
            conn.execute(statement)
        conn.execute("CHECKPOINT")
    os.replace(partial, path)
    return path


#: The 22 queries, with the specification's validation parameters.
QUERIES: dict[int, str] = {
    1: """SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
        sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
        sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty,
        avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order
        FROM lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY
        GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""",
    2: """SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
        FROM part, supplier, partsupp, nation, region
        WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = 15 AND p_type LIKE '%BRASS'
          AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE'
          AND ps_supplycost = (
            SELECT min(ps_supplycost) FROM partsupp, supplier, nation, region
            WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND s_nationkey = n_nationkey
              AND n_regionkey = r_regionkey AND r_name = 'EUROPE')
        ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100""",
    3: """SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
        FROM customer, orders, lineitem
        WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
          AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
        GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10""",
    4: """SELECT o_orderpriority, count(*) AS order_count FROM orders
        WHERE o_orderdate >= DATE '1993-07-01' AND o_orderdate < DATE '1993-07-01' + INTERVAL '3' MONTH
          AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
        GROUP BY o_orderpriority ORDER BY o_orderpriority""",
    5: """SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
        FROM customer, orders, lineitem, supplier, nation, region
        WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
          AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
          AND r_name = 'ASIA' AND o_orderdate >= DATE '1994-01-01'
          AND o_orderdate < DATE '1994-01-01' + INTERVAL '1' YEAR
        GROUP BY n_name ORDER BY revenue DESC""",
    6: """SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem
        WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR
          AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24""",
    7: """SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue FROM (
          SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation, extract(year FROM l_shipdate) AS l_year,
                 l_extendedprice * (1 - l_discount) AS volume
          FROM supplier, lineitem, orders, customer, nation n1, nation n2
          WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
            AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
            AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
            AND l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31') AS shipping
        GROUP BY supp_nation, cust_nation, l_year ORDER BY supp_nation, cust_nation, l_year""",
    8: """SELECT o_year, sum(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END) / sum(volume) AS mkt_share FROM (
          SELECT extract(year FROM o_orderdate) AS o_year, l_extendedprice * (1 - l_discount) AS volume,
                 n2.n_name AS nation
          FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
          WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
            AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey AND n1.n_regionkey = r_regionkey
            AND r_name = 'AMERICA' AND s_nationkey = n2.n_nationkey
            AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'
            AND p_type = 'ECONOMY ANODIZED STEEL') AS all_nations
        GROUP BY o_year ORDER BY o_year""",
    9: """SELECT nation, o_year, sum(amount) AS sum_profit FROM (
          SELECT n_name AS nation, extract(year FROM o_orderdate) AS o_year,
                 l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
          FROM part, supplier, lineitem, partsupp, orders, nation
          WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
            AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey
            AND p_name LIKE '%green%') AS profit
        GROUP BY nation, o_year ORDER BY nation, o_year DESC""",
    10: """SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name,
        c_address, c_phone, c_comment
        FROM customer, orders, lineitem, nation
        WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate >= DATE '1993-10-01'
          AND o_orderdate < DATE '1993-10-01' + INTERVAL '3' MONTH AND l_returnflag = 'R'
          AND c_nationkey = n_nationkey
        GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
        ORDER BY revenue DESC LIMIT 20""",
    11: """SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value FROM partsupp, supplier, nation
        WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY'
        GROUP BY ps_partkey HAVING sum(ps_supplycost * ps_availqty) > (
          SELECT sum(ps_supplycost * ps_availqty) * 0.0001 FROM partsupp, supplier, nation
          WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY')
        ORDER BY value DESC""",
    12: """SELECT l_shipmode,
        sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) AS high_line_count,
        sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END)
          AS low_line_count
        FROM orders, lineitem
        WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate
          AND l_shipdate < l_commitdate AND l_receiptdate >= DATE '1994-01-01'
          AND l_receiptdate < DATE '1994-01-01' + INTERVAL '1' YEAR
        GROUP BY l_shipmode ORDER BY l_shipmode""",
    13: """SELECT c_count, count(*) AS custdist FROM (
          SELECT c_custkey, count(o_orderkey) AS c_count
          FROM customer LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'
          GROUP BY c_custkey) AS c_orders
        GROUP BY c_count ORDER BY custdist DESC, c_count DESC""",
    14: """SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
          / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
        FROM lineitem, part
        WHERE l_partkey = p_partkey AND l_shipdate >= DATE '1995-09-01'
          AND l_shipdate < DATE '1995-09-01' + INTERVAL '1' MONTH""",
    15: """WITH revenue AS (
          SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue FROM lineitem
          WHERE l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1996-01-01' + INTERVAL '3' MONTH
          GROUP BY l_suppkey)
        SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue
        WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue)
        ORDER BY s_suppkey""",
    16: """SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt FROM partsupp, part
        WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45' AND p_type NOT LIKE 'MEDIUM POLISHED%'
          AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
          AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
        GROUP BY p_brand, p_type, p_size ORDER BY supplier_cnt DESC, p_brand, p_type, p_size""",
    17: """SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part
        WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container = 'MED BOX'
          AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)""",
    18: """SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) AS total_quantity
        FROM customer, orders, lineitem
        WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
          AND c_custkey = o_custkey AND o_orderkey = l_orderkey
        GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
        ORDER BY o_totalprice DESC, o_orderdate LIMIT 100""",
    19: """SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem, part
        WHERE (p_partkey = l_partkey AND p_brand = 'Brand#12'
               AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') AND l_quantity >= 1
               AND l_quantity <= 1 + 10 AND p_size BETWEEN 1 AND 5 AND l_shipmode IN ('AIR', 'AIR REG')
               AND l_shipinstruct = 'DELIVER IN PERSON')
           OR (p_partkey = l_partkey AND p_brand = 'Brand#23'
               AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') AND l_quantity >= 10
               AND l_quantity <= 10 + 10 AND p_size BETWEEN 1 AND 10 AND l_shipmode IN ('AIR', 'AIR REG')
               AND l_shipinstruct = 'DELIVER IN PERSON')
           OR (p_partkey = l_partkey AND p_brand = 'Brand#34'
               AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') AND l_quantity >= 20
               AND l_quantity <= 20 + 10 AND p_size BETWEEN 1 AND 15 AND l_shipmode IN ('AIR', 'AIR REG')
               AND l_shipinstruct = 'DELIVER IN PERSON')""",
    20: """SELECT s_name, s_address FROM supplier, nation
        WHERE s_suppkey IN (
            SELECT ps_suppkey FROM partsupp
            WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')
              AND ps_availqty > (
                SELECT 0.5 * sum(l_quantity) FROM lineitem
                WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_shipdate >= DATE '1994-01-01'
                  AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR))
          AND s_nationkey = n_nationkey AND n_name = 'CANADA'
        ORDER BY s_name""",
    21: """SELECT s_name, count(*) AS numwait FROM supplier, lineitem l1, orders, nation
        WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
          AND l1.l_receiptdate > l1.l_commitdate
          AND EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
          AND NOT EXISTS (SELECT * FROM lineitem l3 WHERE l3.l_orderkey = l1.l_orderkey
                          AND l3.l_suppkey <> l1.l_suppkey AND l3.l_receiptdate > l3.l_commitdate)
          AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA'
        GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 100""",
    22: """SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal FROM (
          SELECT substring(c_phone, 1, 2) AS cntrycode, c_acctbal FROM customer
          WHERE substring(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17')
            AND c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00
                             AND substring(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17'))
            AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale
        GROUP BY cntrycode ORDER BY cntrycode""",
}
