"""What every widget does with its callbacks: run them guarded, show their errors, keep the errors for code.

A widget callback has nowhere else to report — an exception raised in an ``on_click`` handler lands in a log the
person never sees — so each callback runs through :meth:`CallbackErrors._guarded`, which shows the error in the
widget's error area (text escaped, traceback collapsed in a ``<details>``) and appends a :class:`WidgetError` to
``widget.errors``. A widget mixes :class:`CallbackErrors` in, declares its two CSS classes and calls
:meth:`CallbackErrors._init_callbacks` before building its layout::

    class MemoryInspector(CallbackErrors, widgets.VBox):
        _css_root = "amn-inspector-root"      # the class its HTML fragments carry (its stylesheet targets it)
        _css_error = "amn-inspector-error"    # the class of its error area (the browser test finds it by it)
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import ipywidgets as widgets

from agentmem_nb.redact import redact
from agentmem_nb.widgets.html import escape

__all__ = ["CallbackErrors", "WidgetError"]


@dataclass(frozen=True, slots=True)
class WidgetError:
    """An error a widget caught and showed (kept so a test or a notebook can inspect it).

    ``action`` says what was being done ("search", "send", "switch user", ...); ``error`` is the exception, or
    ``None`` when the failure was reported without one (the chat's ``TurnResult.error``); ``traceback`` is the
    formatted traceback (empty without an exception).
    """

    action: str
    message: str
    error: BaseException | None = None
    traceback: str = ""


class CallbackErrors:
    """Mixin for a widget: guarded callbacks, an error area, ``errors``/``last_error``/``clear_error()``, and a
    ``_syncing`` flag that keeps observers quiet while the widget sets its own controls."""

    _css_root: ClassVar[str]
    """CSS class of the widget's HTML fragments; the error box carries it too, so the widget's style applies."""
    _css_error: ClassVar[str]
    """CSS class of the error area (``ipywidgets.HTML``)."""
    _clear_error_on_action: ClassVar[bool] = True
    """Hide the previous error before each guarded callback runs (the chat clears it only when a turn starts)."""

    errors: list[WidgetError]
    """Every error shown since the widget was created, oldest first."""
    error_area: widgets.HTML
    _syncing: bool

    def _init_callbacks(self) -> None:
        """Create :attr:`errors`, :attr:`error_area` and the ``_syncing`` flag; call before laying the widget out."""
        self.errors = []
        self.error_area = widgets.HTML()
        self.error_area.add_class(self._css_error)
        self._syncing = False

    @property
    def last_error(self) -> WidgetError | None:
        """The most recent error shown in the widget, if any."""
        return self.errors[-1] if self.errors else None

    def clear_error(self) -> None:
        """Hide the error area (the errors stay in :attr:`errors`)."""
        self.error_area.value = ""

    def _guarded(self, action: str, callback: Callable[..., Any]) -> Callable[..., None]:
        """``callback`` wrapped so that an exception is shown in the widget (as an error while ``action``)."""

        def run(*args: Any) -> None:
            try:
                if self._clear_error_on_action:
                    self.clear_error()
                callback(*args)
            except Exception as exc:  # noqa: BLE001 - a widget callback has nowhere else to report: show it
                self._show_error(action, exc)

        return run

    def _guarded_change(self, action: str, callback: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
        """An ``observe(..., names="value")`` handler: ``callback(new value)``, guarded, unless the widget itself
        is setting the control (``_syncing``)."""
        guarded = self._guarded(action, callback)

        def on_change(change: dict[str, Any]) -> None:
            if not self._syncing:
                guarded(change["new"])

        return on_change

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """Set controls from code without their observers firing (nesting keeps the outer block quiet)."""
        previous, self._syncing = self._syncing, True
        try:
            yield
        finally:
            self._syncing = previous

    def _show_error(self, action: str, exc: BaseException | None, *, message: str = "", keep_shown: bool = False
                    ) -> None:
        """Record the error in :attr:`errors` and show it: escaped text, the traceback folded in ``<details>``.
        ``message`` replaces the exception's text (and is needed when ``exc`` is ``None``); ``keep_shown`` adds the
        box under the errors already shown instead of replacing them (a failed turn and a failing ``on_turn``
        callback are both worth seeing)."""
        # redacted: an exception may quote a key or a URL's password, and this box is what the person sees
        text = redact(message or f"{type(exc).__name__}: {exc}")
        trace = redact("".join(traceback.format_exception(exc))) if exc is not None else ""
        self.errors.append(WidgetError(action, text, exc, trace))
        details = f"<details><summary>traceback</summary><pre>{escape(trace)}</pre></details>" if trace else ""
        box = (f'<div class="{self._css_root} amn-error-box"><b>Error while {escape(action)}:</b> '
               f"{escape(text)}{details}</div>")
        self.error_area.value = (self.error_area.value + box) if keep_shown else box
        self._after_error()

    def close(self) -> None:
        """Close the widget and every widget it is made of (children, their layouts and styles).

        ipywidgets keeps each open widget in a registry until it is closed, and the controls' handlers refer back
        to this widget: closing only the outer box would leave it reachable, and alive, for the rest of the
        session."""
        for part in _parts(self):
            part.close()
        super().close()  # type: ignore[misc]  # a mixin: close() comes from the ipywidgets box it is mixed into

    def _after_error(self) -> None:
        """Hook run after an error is shown. The inspector and the timeline re-sync their controls here: a control
        may have moved ahead of the state (an unknown user typed), and should show the state again."""


def _parts(root: widgets.Widget) -> list[widgets.Widget]:
    """Every widget inside ``root`` (not ``root`` itself), innermost first."""
    found: list[widgets.Widget] = []
    for child in getattr(root, "children", ()):
        found += _parts(child)
        found.append(child)
    for name in ("layout", "style"):
        part = getattr(root, name, None)
        if isinstance(part, widgets.Widget):
            found.append(part)
    return found
