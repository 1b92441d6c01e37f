"""Thread workers that hand their result back on the UI thread, and report failures in one place.

Why: database queries, the model and imports must never run on the UI thread, and a failure in any of
them must become a notification (MemApp.show_error), not a crash or a silently stuck screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from textual.dom import DOMNode
from textual.worker import Worker, get_current_worker

T = TypeVar("T")


def run_in_thread(
    node: DOMNode,
    fn: Callable[[], T],
    then: Callable[[T], Any] | None = None,
    *,
    group: str = "db",
    exclusive: bool = False,
    description: str = "",
    on_error: Callable[[BaseException], Any] | None = None,
) -> Worker[None]:
    """Run `fn` in a thread worker owned by `node`; call `then(result)` on the UI thread.

    A cancelled worker (a newer search, a closed screen) calls nothing. On an exception the app's
    `show_error` is told (and `on_error`, for the caller to reset its own state).
    """
    app = node.app
    what = description or getattr(fn, "__name__", "database work")

    def deliver(callback: Callable[..., Any], *args: Any) -> Any:
        if node.is_attached:
            return callback(*args)
        return None

    def work() -> None:
        try:
            result = fn()
        except Exception as exc:
            if not get_current_worker().is_cancelled:
                show = getattr(app, "show_error", None)
                if show is not None:
                    app.call_from_thread(show, exc, what)
                if on_error is not None:
                    app.call_from_thread(deliver, on_error, exc)
            return
        if then is not None and not get_current_worker().is_cancelled:
            app.call_from_thread(deliver, then, result)

    return node.run_worker(
        work, thread=True, group=group, exclusive=exclusive, exit_on_error=False, description=what
    )
