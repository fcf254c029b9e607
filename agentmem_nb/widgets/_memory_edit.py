"""Editing memory from the inspector: change or delete a long-term line, restore a version from the history, redact
a message.

Every change goes through :class:`~agentmem_nb.store.longterm.LongTermMemory` and so is a recorded version in its
history (``source="inspector"``, or ``restore:N:after``), which the inspector's "history of changes" scope lists. A
line is changed only if it still holds the text the person saw: the edit is a compare-and-swap on the version read
(``write(expected_version=...)``), so a note the agent added meanwhile is never overwritten — the error says to
refresh. A message is never rewritten: redacting it records an event (:mod:`agentmem_nb.store.redactions`) that the
inspector reads to show the reason instead of the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets

from agentmem_nb.errors import StoreError
from agentmem_nb.store.redactions import redactions_of
from agentmem_nb.widgets._inspector_data import NO_REDACTIONS
from agentmem_nb.widgets.html import escape

if TYPE_CHECKING:
    from agentmem_nb.widgets.inspector import MemoryInspector

__all__ = ["EditPanel", "SOURCE"]

SOURCE = "inspector"
"""The ``source`` of a change made from the inspector, as its history records it."""


class EditPanel:
    """The inspector's edit controls (shown on the long-term layer) and the edits they make."""

    def __init__(self, inspector: MemoryInspector) -> None:
        self._inspector = inspector
        self.line = widgets.BoundedIntText(description="Line", min=1, max=1, layout=widgets.Layout(width="130px"),
                                           style={"description_width": "36px"})
        self.line.add_class("amn-edit-line")
        self.text = widgets.Textarea(placeholder="the line's new text", rows=2,
                                     layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.text.add_class("amn-edit-text")
        self.save_button = widgets.Button(description="Save line", icon="save", layout=widgets.Layout(width="auto"))
        self.save_button.add_class("amn-edit-save")
        self.delete_button = widgets.Button(description="Delete line", icon="trash",
                                            layout=widgets.Layout(width="auto"))
        self.delete_button.add_class("amn-edit-delete")
        self.version = widgets.BoundedIntText(description="Version", min=0, max=0,
                                              layout=widgets.Layout(width="150px"), style={"description_width": "52px"})
        self.version.add_class("amn-edit-version")
        self.restore_button = widgets.Button(description="Restore version", icon="undo",
                                             layout=widgets.Layout(width="auto"))
        self.restore_button.add_class("amn-edit-restore")
        self.reason = widgets.Text(placeholder="why this message is redacted (kept with the event)",
                                   layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.reason.add_class("amn-edit-reason")
        self.redact_button = widgets.Button(description="Redact chosen message", icon="eye-slash",
                                            layout=widgets.Layout(width="auto"))
        self.redact_button.add_class("amn-edit-redact")
        self.status = widgets.HTML()
        self.status.add_class("amn-edit-status")
        self.lines_row = widgets.HBox([self.line, self.text, self.save_button, self.delete_button],
                                      layout=widgets.Layout(flex_flow="row wrap"))
        self.history_row = widgets.HBox([self.version, self.restore_button])
        self.redact_row = widgets.HBox([self.reason, self.redact_button])
        self.box = widgets.VBox([self.lines_row, self.history_row, self.redact_row, self.status])
        self.box.add_class("amn-inspector-edit")
        guarded = inspector._guarded
        self.save_button.on_click(guarded("save line", lambda _b: self.edit_line(self.line.value, self.text.value)))
        self.delete_button.on_click(guarded("delete line", lambda _b: self.delete_line(self.line.value)))
        self.restore_button.on_click(guarded("restore version", lambda _b: self.restore(self.version.value)))
        self.redact_button.on_click(guarded("redact message", lambda _b: self._redact_chosen()))
        line_changed = inspector._guarded_change("choose line", lambda _v: self._fill_text())
        self.line.observe(line_changed, names="value")

    # ------------------------------------------------------------------ edits

    def edit_line(self, line_no: int, text: str) -> None:
        """Replace line ``line_no`` (1-based) with ``text`` (one line: newlines become spaces)."""
        new = " ".join(str(text).split())
        if not new:
            raise ValueError("the new text is empty: use Delete line to remove a line")
        self._change(line_no, new, "changed")

    def delete_line(self, line_no: int) -> None:
        """Delete line ``line_no`` (1-based)."""
        self._change(line_no, None, "deleted")

    def restore(self, version: int) -> None:
        """Make the text what change ``version`` left it."""
        lt = self._inspector.mem.long_term
        done = lt.restore(int(version))
        self._done(f"restored version {int(version)}" + ("" if done else " (the text was already that)"))

    def _redact_chosen(self) -> None:
        inspector = self._inspector
        if inspector.window is None:
            raise ValueError("choose a hit first: its message is the one redacted")
        session_id, message_id = inspector._message_of(inspector.window.hit)
        if session_id is None or message_id is None:
            raise ValueError("the chosen hit names no message of a conversation")
        inspector.redact_message(session_id, message_id, reason=self.reason.value)
        self.reason.value = ""

    def _change(self, line_no: int, new: str | None, what: str) -> None:
        lt = self._inspector.mem.long_term
        snapshot = lt.current()
        if snapshot.version is None:
            raise StoreError(f"{lt.path} cannot be versioned right now (not UTF-8, or its history is not writable): "
                             "fix the file, then edit")
        lines = snapshot.text.splitlines(keepends=True)
        if not 1 <= int(line_no) <= len(lines):
            raise ValueError(f"line {line_no} does not exist: long-term memory has {len(lines)} line(s)")
        shown = self._shown_text(int(line_no))
        if shown is not None and lines[int(line_no) - 1].rstrip("\r\n") != shown:
            raise StoreError(f"line {line_no} changed since it was shown (now {lines[int(line_no) - 1].strip()!r}): "
                             "press Refresh and edit again; nothing was written")
        ending = lines[int(line_no) - 1][len(lines[int(line_no) - 1].rstrip("\r\n")):] or "\n"
        lines[int(line_no) - 1] = "" if new is None else new + ending
        # compare-and-swap on the version read: a note written meanwhile raises VersionConflict, nothing is lost
        lt.write("".join(lines), source=SOURCE, expected_version=snapshot.version)
        self._done(f"line {int(line_no)} {what}")

    def _shown_text(self, line_no: int) -> str | None:
        frame = self._inspector.frame
        if self._inspector.state.view != "long_term" or not len(frame):
            return None
        match = frame[frame["line_no"] == line_no]
        return str(match["text"].iloc[0]) if len(match) else None

    def _done(self, what: str) -> None:
        self._inspector.refresh()
        self.status.value = (f'<div class="amn-inspector-root amn-edit-done">✓ {escape(what)}; recorded in the '
                             "history of changes (Show ▸ history of changes)</div>")

    # ------------------------------------------------------------------ view

    def row_chosen(self, position: int) -> None:
        """A row of the layer's table was clicked: a long-term line is put in the editor; a history version in the
        restore box."""
        inspector = self._inspector
        frame = inspector.frame
        if position >= len(frame):
            return
        if inspector.state.view == "long_term":
            self.line.value = int(frame["line_no"].iloc[position])
            self._fill_text()
        elif inspector.state.view == "long_term/history":
            self.version.value = int(frame["version"].iloc[position])

    def _fill_text(self) -> None:
        shown = self._shown_text(int(self.line.value))
        if shown is not None:
            self.text.value = shown

    def sync_redact(self) -> None:
        """Enable the redact control when a hit is chosen and the store keeps redactions (both backends do; on a
        store that keeps none the button stays disabled and its tooltip says why)."""
        inspector = self._inspector
        supported = inspector.user_id is None or redactions_of(inspector.mem) is not None
        self.redact_button.disabled = inspector.window is None or not supported
        self.reason.disabled = not supported
        self.redact_button.tooltip = "" if supported else NO_REDACTIONS

    def render(self) -> None:
        """Show the controls that apply to the layer shown."""
        inspector = self._inspector
        view = inspector.state.view if inspector.user_id is not None else ""
        self.box.layout.display = "" if view in ("long_term", "long_term/history", "sessions", "days") else "none"
        self.redact_row.layout.display = "" if view in ("sessions", "days") else "none"
        self.sync_redact()
        self.lines_row.layout.display = "" if view == "long_term" else "none"
        self.history_row.layout.display = "" if view == "long_term/history" else "none"
        frame = inspector.frame
        with inspector._quiet():
            if view == "long_term" and len(frame):
                self.line.max = max(1, int(frame["line_no"].max()))
            if view == "long_term/history" and len(frame):
                self.version.max = int(frame["version"].max())
