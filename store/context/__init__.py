"""Building the message list a chat model should see, within a token budget.

- builder.py: build_context and the tiers' budget.
- tier1.py: tier 1 (pinned and retrieved memories, the summary and topics).
"""
