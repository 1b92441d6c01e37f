"""Reusable widgets, one per module once they have behaviour."""
