"""agentsweep: evaluator layer.

The benchmark registry (`evaluator.benchmarks`) sits above a layer that must ask it without
importing it: the dataset registry (`bench_data.registry`) learns the built-in benchmarks' data
formats from it. Importing this package hands it over, so every entry point (the CLI, tests,
plugins) finds the registry wired in.
"""

from bench_data.registry import add_format_source
from evaluator import benchmarks

add_format_source(benchmarks.load_builtins)
