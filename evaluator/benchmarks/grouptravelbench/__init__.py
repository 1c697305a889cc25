"""GroupTravelBench: one agent plans a trip for a group chat of 2-6 simulated users.

The deterministic mechanics live here as pure modules (no model calls, no I/O beyond reading
a POI table by path): preference tables and compromises (`preferences`, `compromise`), the
chat's speaking order (`chat`, `scheduler`), the plan JSON (`plan`), the rule metrics
(`completeness`, `utility`, `validity`), their aggregation (`aggregate`) and the judge's
rubric data (`rubric`). docs/grouptravelbench.md describes them; the plugin registration is
wired elsewhere.
"""
