"""The generated world: reproducible, the contract's schema and indexes, read-only access."""

from __future__ import annotations

import json
import pickle
import sqlite3
from pathlib import Path

import pytest

from evaluator.benchmarks.tripbench.world import World, names, open_world, schema
from evaluator.benchmarks.tripbench.world.db import WorldError
from evaluator.benchmarks.tripbench.world.generate import (
    GENERATOR,
    SIZES,
    VERSION,
    content_digest,
    generate_world,
    table_counts,
)

CONTRACT_COLUMNS = {
    "meta": "key value",
    "cities": "id name lat lon",
    "attractions": "id city_id name category heat_score comment_score comment_count sight_level "
                   "lat lon open_time close_time closed_weekdays duration_min",
    "attraction_products": "id attraction_id name price",
    "hotels": "id city_id name star brand facilities score lat lon review_count good_rate "
              "product_rating environment_rating service_rating",
    "hotel_rooms": "id hotel_id name capacity price breakfast cancel_policy has_window",
    "restaurants": "id city_id name cuisine avg_price score lat lon open_time close_time "
                   "review_count product_rating environment_rating service_rating reservable "
                   "must_reserve",
    "restaurant_products": "id restaurant_id name price people",
    "flights": "id number from_city to_city date dep_time arr_time duration_min airline "
               "from_airport to_airport from_lat from_lon to_lat to_lon on_time_rate "
               "avg_delay_min",
    "flight_seats": "id flight_id cabin price remaining platform",
    "trains": "id number from_city to_city date dep_time arr_time duration_min train_type "
              "from_station to_station from_lat from_lon to_lat to_lon",
    "train_seats": "id train_id seat_class price remaining platform",
}


def test_same_seed_same_content_other_seed_differs(tmp_path: Path, world_path: Path) -> None:
    again = generate_world(tmp_path / "again.sqlite", "small", 0)
    other = generate_world(tmp_path / "other.sqlite", "small", 1)
    assert content_digest(again) == content_digest(world_path)
    assert again.read_bytes() == world_path.read_bytes()   # same SQLite: the same file too
    assert content_digest(other) != content_digest(world_path)
    assert not list(tmp_path.glob(".*.tmp"))          # the temporary file was renamed


def test_regenerating_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "w.sqlite"
    path.write_text("old")
    generate_world(path, "small", 3)
    assert open_world(path).meta["seed"] == "3"


def test_unknown_size() -> None:
    with pytest.raises(ValueError, match="unknown world size"):
        generate_world("/nonexistent/x.sqlite", "huge", 0)


def test_contract_tables_columns_and_indexes(world_path: Path) -> None:
    conn = sqlite3.connect(world_path)
    for table, cols in CONTRACT_COLUMNS.items():
        got = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        assert got == cols.split(), table
        assert got == schema.columns(table)
    indexes = {r[0]: r[1] for r in conn.execute(
        "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    assert indexes == {name: table for name, (table, _) in schema.INDEXES.items()}
    cols = {r[2] for r in conn.execute("PRAGMA index_info(ix_flights_route_date)")}
    assert cols == {"from_city", "to_city", "date"}
    assert conn.execute("SELECT COUNT(*) FROM sqlite_stat1").fetchone()[0] > 0   # ANALYZE ran
    conn.close()


def test_meta_and_sizes(world: World) -> None:
    meta = world.meta
    assert meta["generator"] == GENERATOR and meta["version"] == VERSION
    assert (meta["seed"], meta["size"]) == ("0", "small")
    assert (meta["date_start"], meta["date_end"]) == ("2025-10-01", "2025-10-07")
    counts = table_counts(world.path)
    assert counts["cities"] == SIZES["small"].cities == 6
    products = sum(counts[t] for t in ("attraction_products", "hotel_rooms",
                                       "restaurant_products", "flight_seats", "train_seats"))
    assert 200 <= products <= 5000
    assert SIZES["paper"].cities == 40


def test_values_keep_the_contract(world: World) -> None:
    q = world.query
    assert q("SELECT COUNT(*) AS n FROM attractions WHERE heat_score NOT BETWEEN 0 AND 10 "
             "OR comment_score NOT BETWEEN 0 AND 5 OR sight_level NOT BETWEEN 0 AND 5")[0]["n"] == 0
    assert q("SELECT COUNT(*) AS n FROM hotels WHERE star NOT BETWEEN 2 AND 5")[0]["n"] == 0
    for row in q("SELECT facilities FROM hotels"):
        assert isinstance(json.loads(row["facilities"]), list)
    for row in q("SELECT closed_weekdays FROM attractions"):
        assert row["closed_weekdays"] == "" or all(
            d.isdigit() and int(d) < 7 for d in row["closed_weekdays"].split(","))
    assert q("SELECT COUNT(*) AS n FROM flight_seats WHERE cabin NOT IN "
             "('economy', 'business', 'first')")[0]["n"] == 0
    # the fields of the paper's other rubrics (B.2): ratings 0-10, rates in %, known codes
    assert q("SELECT COUNT(*) AS n FROM hotels WHERE good_rate NOT BETWEEN 0 AND 100 OR "
             "review_count < 0 OR product_rating NOT BETWEEN 0 AND 10 OR environment_rating "
             "NOT BETWEEN 0 AND 10 OR service_rating NOT BETWEEN 0 AND 10")[0]["n"] == 0
    policies = {r["cancel_policy"] for r in q("SELECT DISTINCT cancel_policy FROM hotel_rooms")}
    assert policies == set(names.CANCEL_POLICIES)
    assert {r["has_window"] for r in q("SELECT DISTINCT has_window FROM hotel_rooms")} == {0, 1}
    assert q("SELECT COUNT(*) AS n FROM hotel_rooms r JOIN hotels h ON h.id = r.hotel_id "
             "WHERE r.breakfast > 0 AND h.facilities NOT LIKE '%\"breakfast\"%'")[0]["n"] == 0
    assert q("SELECT COUNT(*) AS n FROM restaurants WHERE must_reserve > reservable")[0]["n"] == 0
    assert {r["reservable"] for r in q("SELECT DISTINCT reservable FROM restaurants")} == {0, 1}
    assert q("SELECT COUNT(*) AS n FROM flights WHERE on_time_rate NOT BETWEEN 0 AND 100 OR "
             "avg_delay_min < 0")[0]["n"] == 0
    assert {r["platform"] for r in q("SELECT DISTINCT platform FROM train_seats")} <= set(
        names.TRAIN_PLATFORMS)
    per_number = q("SELECT number, COUNT(DISTINCT on_time_rate) AS n FROM flights "
                   "GROUP BY number, from_city, to_city")
    assert all(r["n"] == 1 for r in per_number)     # a flight number's statistics
    bad_refs = q("SELECT COUNT(*) AS n FROM trains t LEFT JOIN cities c ON c.id = t.to_city "
                 "WHERE c.id IS NULL")
    assert bad_refs[0]["n"] == 0
    # arrival times wrap past midnight exactly when dep + duration does
    for r in q("SELECT dep_time, arr_time, duration_min FROM trains"):
        h, m = map(int, r["dep_time"].split(":"))
        end = h * 60 + m + r["duration_min"]
        assert r["arr_time"] == f"{end // 60 % 24:02d}:{end % 60:02d}"
        assert (r["arr_time"] < r["dep_time"]) == (end >= 24 * 60)


def test_getters(world: World) -> None:
    assert world.city("C0001")["name"] == "Shanghai"
    assert world.city_by_name("  shanghai ")["id"] == "C0001"
    assert world.city_by_name("Atlantis") is None
    for getter, id_ in ((world.attraction, "A000001"), (world.attraction_product, "AP0000001"),
                        (world.hotel, "H000001"), (world.room, "HR0000001"),
                        (world.restaurant, "R000001"), (world.flight, "F0000001"),
                        (world.flight_seat, "FS0000001"), (world.train, "T0000001"),
                        (world.train_seat, "TS0000001")):
        row = getter(id_)
        assert isinstance(row, dict) and row["id"] == id_
        assert getter("X0") is None and getter(None) is None  # type: ignore[arg-type]
    assert world.restaurant_product(world.query(
        "SELECT id FROM restaurant_products LIMIT 1")[0]["id"]) is not None
    assert world.one("SELECT COUNT(*) AS n FROM cities") == {"n": 6}


def test_read_only(world: World, world_path: Path) -> None:
    for sql in ("DELETE FROM cities", "CREATE TABLE x (a)", "UPDATE hotels SET star = 5"):
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only"):
            world.conn.execute(sql)
    assert world.city("C0001") is not None


def test_pickles_as_its_path(world: World) -> None:
    copy = pickle.loads(pickle.dumps(world))
    assert copy is not world and copy.path == world.path
    assert copy.city("C0002") == world.city("C0002")
    copy.close()


def test_open_errors(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match="no world database"):
        open_world(tmp_path / "missing.sqlite")
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(WorldError, match="not a world database"):
        open_world(bad)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).execute("CREATE TABLE t (a)").connection.close()
    with pytest.raises(WorldError, match="not a world database"):
        open_world(empty)
