"""Offline text understanding, no LLM: sentences, extractive summaries, topics, memory suggestions.

- sentences.py: splitting and scoring sentences.
- summaries.py: incremental thread summaries within a token cap.
- topics.py: key terms per thread.
- suggestions.py + patterns.py: candidate long-term memories found in a thread.
"""
