"""TRIP-Bench (long-horizon travel planning with 18 tools; arXiv 2025, LongCat/Meituan).

The paper's POI data (TripTailor, extended) is not released, so the world is generated:
`world/` (seeded generator, the read-only SQLite world), `tools.py` (the 18 tools of the
paper's appendix B.1 over it), `environment.py` (the environment factory). The benchmark is not
registered yet (docs/tripbench.md).
"""
