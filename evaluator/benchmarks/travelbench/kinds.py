"""TravelBench's judgement kinds (part of every judgement key: never rename one), in a module
that imports nothing, so that registering the benchmark imports no judge code."""

from __future__ import annotations

RUBRIC_KIND = "travel_rubric"   # the rubric judge (judges.py)
META_KIND = "meta"              # the meta-judge that audits it
