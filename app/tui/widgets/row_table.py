"""A DataTable for lists of rows: Home/End go to the first/last row (DataTable's own Home/End scroll
sideways, which is what a spreadsheet wants and a list does not).

Every list screen rebuilds its table the same way when it reads its rows again (the column widths follow
the terminal's width): `set_columns` and `refill` are that one way, instead of a copy per screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

Column = tuple[str | Text, str, int]
"""A column: its label, its key, its width in cells."""


class RowTable(DataTable[Text]):
    """Row cursor, zebra stripes, and list-like Home/End."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def set_columns(self, columns: Sequence[Column]) -> None:
        """No rows, and these columns: the table of a list about to be read again from its first row."""
        self.clear(columns=True)
        for label, key, width in columns:
            self.add_column(label, key=key, width=width)

    def refill(self, columns: Sequence[Column], rows: Iterable[tuple[str, Sequence[Text]]]) -> None:
        """Every column and row (key, cells) anew, the cursor on the same row number as before (or the
        last row, if the list got shorter)."""
        row = self.cursor_row
        self.set_columns(columns)
        for key, cells in rows:
            self.add_row(*cells, key=key)
        if self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1))
