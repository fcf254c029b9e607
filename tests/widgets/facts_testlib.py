"""Shared by the facts widget tests: how many widgets are open (ipywidgets' registry)."""

from __future__ import annotations

from ipywidgets.widgets import widget as _widget_module

__all__ = ["open_widgets"]


def open_widgets() -> int:
    """How many widgets ipywidgets keeps open (its registry; ``Widget.widgets`` is the deprecated public name of the
    same dict). A widget leaves it only when closed."""
    return len(_widget_module._instances)
