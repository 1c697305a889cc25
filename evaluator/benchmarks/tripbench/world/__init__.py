"""The generated TRIP-Bench world: `generate.py` writes it, `db.py` opens it read-only."""

from .db import World, open_world

__all__ = ["World", "open_world"]
