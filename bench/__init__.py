"""memapp's benchmarks, evaluations and tuning tools: `python -m bench --list` names them.

- `bench.perf`: speed and memory figures, each beside a baseline measured in the same run (JSON).
- `bench.quality`: the search, truth and secrets evaluations on the data under bench/eval/.
- `bench.tune`: tools that choose a setting on an evaluation's tuning half.
- `bench.lib`: what they share (synthetic data, timing, output, the evaluations' data loaders).
"""
