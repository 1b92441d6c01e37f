"""The memapp command: CLI entry, Textual app, screens and widgets."""
