"""Speed and memory figures, each beside a baseline measured in the same run; each prints JSON."""
