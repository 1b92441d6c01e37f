"""What the benchmarks share: synthetic data, timing, JSON output, the evaluations' data and report rows."""
