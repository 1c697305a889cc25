"""agentsweep: evaluator layer.

The benchmark registry (`evaluator.benchmarks`) sits above two layers that must ask it without
importing it: the dataset registry (`bench_data.registry`) learns the built-in benchmarks' data
formats from it, and the run config (`evaluator.config`, `profiles`, `config_check`,
`config_doc`) asks it for a benchmark's profiles, options type and old keys through
`evaluator.catalog`. Importing this package hands the registry to both, so every entry point
(the CLI, tests, plugins) finds it wired in.
"""

from bench_data.registry import add_format_source
from evaluator import benchmarks, catalog

add_format_source(benchmarks.load_builtins)
catalog.install(benchmarks)
