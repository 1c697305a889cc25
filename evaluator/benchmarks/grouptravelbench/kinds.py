"""GroupTravelBench's judgement kinds and their versions (part of every judgement key: never
rename a kind; a version changes when what a judge is shown or how its answer is read does).
A module of its own so that registering the benchmark imports no judge or metric code."""

from __future__ import annotations

METRICS = "gtb_metrics"           # the rule metrics PC/GU/GF/PV (scoring.py)
METRICS_VERSION = "gtb-metrics-v3"
JUDGE_KIND = "gtb_judge"          # the 5-dimension LLM judge (judges.py)
JUDGE_VERSION = "gtb-judge-v2"
META_KIND = "gtb_meta"            # its meta-judge calibration
META_VERSION = "gtb-meta-v2"
