"""A DataTable for lists of rows: Home/End go to the first/last row (DataTable's own Home/End scroll
sideways, which is what a spreadsheet wants and a list does not)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class RowTable(DataTable[Text]):
    """Row cursor, zebra stripes, and list-like Home/End."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
