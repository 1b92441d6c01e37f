"""The evaluations (search, truth; the secrets evaluation is scored by bench.perf.redaction)."""
