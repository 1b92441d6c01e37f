"""Sync between devices through a folder (issue 29); see docs/design/sync.md."""
