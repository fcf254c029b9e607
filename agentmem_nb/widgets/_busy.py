"""A view says it is working: while a slow search or load runs, its results are dimmed and a status line says what
is happening (issue 19, item 7: a 2.2 s ranked search over 100k messages used to leave the old results on screen,
looking current).

Widget state goes to the browser as each trait is set, so setting the status *before* the work starts shows it for
the whole time the kernel is busy; ``finally`` takes it away even when the work fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import ipywidgets as widgets

from agentmem_nb.widgets.html import escape

__all__ = ["BUSY_CLASS", "BusyState"]

BUSY_CLASS = "amn-busy"
"""CSS class of a view while it works (its stylesheet dims the results)."""


class BusyState:
    """The status line of one view and its busy flag (``busy`` is what a test checks during the work)."""

    def __init__(self, owner: widgets.DOMWidget, css: str) -> None:
        self._owner = owner
        self.status = widgets.HTML()
        self.status.add_class(css)
        self.busy: str = ""
        """What the view is doing now (``""``: nothing)."""

    @contextmanager
    def working(self, what: str) -> Iterator[None]:
        """Dim the view and say ``what`` (e.g. "Searching “lyon”…") until the block ends; nested blocks keep the
        outer one's message."""
        if self.busy:
            yield
            return
        self.busy = what
        self._owner.add_class(BUSY_CLASS)
        self.status.value = f'<div class="amn-busy-note" role="status">⏳ {escape(what)}</div>'
        try:
            yield
        finally:
            self.busy = ""
            self._owner.remove_class(BUSY_CLASS)
            self.status.value = ""
