"""The generic judging machinery: the JudgePool that runs each benchmark's judges on finished
episodes, judge calls with retries and guided JSON, tolerant parsing, transcripts for prompts,
the `[judge]` settings and the rubric-based sliding-window evaluator. The judges themselves are
the benchmarks' (`Benchmark.judges`; TravelBench's rubric judge, meta-judge and rule check are
in its package). See docs/judges.md."""
