"""Read-only access to a generated world (the schema of `schema.py`).

`open_world(path)` opens the file through a `file:...?mode=ro` URI (`PRAGMA query_only` on top),
with `check_same_thread=False` and a memory map, so N processes opening the same file share its
pages through the OS page cache. A `World` pickles as its path: a child process that receives
one opens its own connection to the same file. Rows come back as dicts.

Besides the contract, the connection has an SQL function `dist_km(lat1, lon1, lat2, lon2)` (the
haversine distance of `geo.py`) for distance filters and sorting inside queries.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self, TypeVar
from urllib.parse import quote

from .geo import haversine_km

T = TypeVar("T")
MMAP_BYTES = 1 << 30


class WorldError(Exception):
    """The file is missing or is not a world database."""


def _dict_row(cursor: sqlite3.Cursor, row: tuple) -> dict[str, Any]:
    return dict(zip([c[0] for c in cursor.description], row, strict=True))


class World:
    """One read-only connection to a world database, plus typed getters."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).resolve()
        if not self.path.is_file():
            raise WorldError(f"no world database at {self.path}")
        uri = f"file:{quote(str(self.path))}?mode=ro"
        self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            self.conn.row_factory = _dict_row
            self.conn.execute("PRAGMA query_only=ON")
            self.conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self.conn.create_function("dist_km", 4, _dist_km, deterministic=True)
            self.meta: dict[str, str] = {r["key"]: r["value"]
                                         for r in self.conn.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise WorldError(f"{self.path} is not a world database: {exc}") from None
        self._memo: dict[str, Any] = {}
        self._memo_lock = threading.Lock()
        try:                    # SQLite's math functions (compiled in on most builds)
            self.sql_math = self.conn.execute("SELECT asin(sin(0.5))").fetchone() is not None
        except sqlite3.OperationalError:
            self.sql_math = False
        self._lock = threading.Lock()

    # -- pickling: a World travels to another process as its path --------------------------
    def __reduce__(self) -> tuple[Callable[..., World], tuple[str]]:
        return (open_world, (str(self.path),))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- queries ----------------------------------------------------------------------------
    def query(self, sql: str, params: Iterable[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            cur = self.conn.cursor()
            cur.row_factory = None          # tuples, then the column names once per query
            cur.execute(sql, params)
            rows = cur.fetchall()
            names = [c[0] for c in cur.description or ()]
        return [dict(zip(names, row)) for row in rows]

    def one(self, sql: str, params: Iterable[Any] | dict[str, Any] = ()) -> dict[str, Any] | None:
        with self._lock:
            return self.conn.execute(sql, params).fetchone()

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """A value derived from the (immutable) world, built once per World and its clones
        (name indexes, a city's search columns); thread-safe."""
        try:
            return self._memo[key]
        except KeyError:
            pass
        with self._memo_lock:
            if key not in self._memo:
                self._memo[key] = build()
            return self._memo[key]

    def clone(self) -> World:
        """Another connection to the same file (for another thread), sharing the memo."""
        other = World(self.path)
        other._memo, other._memo_lock = self._memo, self._memo_lock
        return other

    def _by_id(self, table: str, id_: str) -> dict[str, Any] | None:
        if not isinstance(id_, str):
            return None
        return self.one(f"SELECT * FROM {table} WHERE id = ?", (id_,))

    # -- typed getters (each: a dict or None) -------------------------------------------------
    def city(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("cities", id_)

    def city_by_name(self, name: str) -> dict[str, Any] | None:
        """Case-insensitive, surrounding spaces ignored."""
        if not isinstance(name, str):
            return None
        return self.one("SELECT * FROM cities WHERE name = ? COLLATE NOCASE", (name.strip(),))

    def attraction(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("attractions", id_)

    def attraction_product(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("attraction_products", id_)

    def hotel(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("hotels", id_)

    def room(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("hotel_rooms", id_)

    def restaurant(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("restaurants", id_)

    def restaurant_product(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("restaurant_products", id_)

    def flight(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("flights", id_)

    def flight_seat(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("flight_seats", id_)

    def train(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("trains", id_)

    def train_seat(self, id_: str) -> dict[str, Any] | None:
        return self._by_id("train_seats", id_)


def _dist_km(lat1: float | None, lon1: float | None, lat2: float | None,
             lon2: float | None) -> float | None:
    if lat1 is None or lon1 is None or lat2 is None or lon2 is None:
        return None
    return haversine_km(lat1, lon1, lat2, lon2)


def open_world(path: str | os.PathLike[str]) -> World:
    """The world database at `path`, read-only (WorldError when missing or not a world)."""
    return World(path)
