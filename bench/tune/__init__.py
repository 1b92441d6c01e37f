"""Tuning tools: each chooses settings on an evaluation's tuning half and reports both halves."""
