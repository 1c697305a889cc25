"""LLM judges and rule checks: TravelBench rubric + meta judge, unsolvable rule, sliding-window
rubric evaluator, and the JudgePool that runs them (see docs/judging.md)."""
