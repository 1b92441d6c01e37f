"""Where the user's files live: chat.db and config.toml (platformdirs, each overridable)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def default_db_path() -> Path:
    """`MEMAPP_DB`, else the platform data dir (e.g. ~/.local/share/memapp/chat.db)."""
    if env := os.environ.get("MEMAPP_DB"):
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("memapp", appauthor=False)) / "chat.db"


def config_path() -> Path:
    """`MEMAPP_CONFIG`, else the platform config dir (e.g. ~/.config/memapp/config.toml)."""
    if env := os.environ.get("MEMAPP_CONFIG"):
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir("memapp", appauthor=False)) / "config.toml"
