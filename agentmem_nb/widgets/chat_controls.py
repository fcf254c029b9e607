"""The chat's two browser-side controls, each a small `anywidget <https://anywidget.dev>`_: the message box and the
history pane.

Why not ``ipywidgets.Text`` and ``ipywidgets.HTML``:

- **Enter sent a truncated message.** The Text view sends Enter as a custom ``{"event": "submit"}`` message at once,
  but the box's value reaches the kernel as a state update, which ipywidgets 8 holds back while an earlier update
  is unacknowledged; typed fast, "submit" overtook the last characters (5 of 16 runs at 5-30 ms per key), and the
  held-back update then put the whole text back in the box. :class:`ChatInput` sends the text *with* the submit
  message and empties the box in the same keystroke, so what is sent is exactly what was in the box.
- **One line only.** :class:`ChatInput` is a ``<textarea>``: Enter sends, Shift+Enter starts a new line, pasted
  newlines are kept (an IME composition's Enter is left to the IME).
- **"Show earlier" jumped to the bottom.** ``HTML`` replaces its content wholesale, which resets the scroll position.
  :class:`HistoryView` notes the first message in view and its offset before each update and puts it back after,
  so older messages appear above the reader's place; a reader at the bottom stays at the bottom as turns arrive.
  It also scrolls to and highlights a message on request (:meth:`HistoryView.reveal`, used by
  ``ChatWidget.open_message``).

Both keep a ``value`` trait, so code (and the tests without a browser) read and set them as before.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

__all__ = ["ChatInput", "HistoryView"]

_INPUT_ESM = r"""
function render({ model, el }) {
  const box = document.createElement("textarea");
  box.className = "amn-chat-textarea";
  box.rows = 2;
  box.placeholder = model.get("placeholder");
  box.value = model.get("value");
  box.disabled = model.get("disabled");
  box.setAttribute("aria-label", "Message");
  const fit = () => {  // grow with the text up to about ten lines, then scroll
    box.style.height = "auto";
    box.style.height = Math.min(box.scrollHeight + 2, 220) + "px";
  };
  box.addEventListener("input", () => {
    model.set("value", box.value);
    model.save_changes();
    fit();
  });
  box.addEventListener("keydown", (event) => {
    // keys typed here are the message's, not JupyterLab's: Shift+Enter would run the cell, Escape leave it
    event.stopPropagation();
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    event.preventDefault();
    const text = box.value;
    if (!text.trim()) return;
    // the text travels with the submit message; the box is emptied in this same keystroke, so a state update
    // still held back by the widget manager can neither shorten what is sent nor bring the text back later
    box.value = "";
    model.set("value", "");
    model.save_changes();
    model.send({ event: "submit", text: text });
    fit();
  });
  // The box is the source of its text: "value" flows to the kernel only. An echo of an older value (the widget
  // manager sends held-back updates late, and the kernel echoes them) would otherwise wipe what was typed since;
  // the kernel changes the text with an explicit "set" message instead (ChatInput's value observer).
  model.on("change:disabled", () => { box.disabled = model.get("disabled"); });
  model.on("change:placeholder", () => { box.placeholder = model.get("placeholder"); });
  model.on("msg:custom", (msg) => {
    if (!msg) return;
    if (msg.do === "focus") box.focus();
    if (msg.do === "set" && typeof msg.text === "string" && box.value !== msg.text) {
      box.value = msg.text;
      fit();
    }
  });
  el.classList.add("amn-chat-input-root");
  el.appendChild(box);
  fit();
}
export default { render };
"""

_HISTORY_ESM = r"""
function render({ model, el }) {
  const pane = document.createElement("div");
  pane.className = "amn-history-scroll";
  pane.style.position = "relative";  // messages' offsetTop is measured from here
  el.appendChild(pane);
  let drawn = false;
  let revealed = 0;
  let pending = null;  // a scroll to apply once the pane has a size (a view is drawn before it is attached)
  const settle = () => {
    if (pending && pane.clientHeight > 0) { const scroll = pending; pending = null; scroll(); }
  };
  new ResizeObserver(settle).observe(pane);
  const draw = () => {
    const atBottom = !drawn || pane.clientHeight === 0
      || pane.scrollHeight - pane.scrollTop - pane.clientHeight < 8;
    let anchor = null, offset = 0;
    if (!atBottom) {  // the reader's place: the first message (partly) in view, and where it stands
      for (const node of pane.querySelectorAll("[data-message-id]")) {
        if (node.offsetTop + node.offsetHeight > pane.scrollTop) {
          anchor = node.getAttribute("data-message-id");
          offset = node.offsetTop - pane.scrollTop;
          break;
        }
      }
    }
    pane.innerHTML = model.get("value");
    drawn = true;
    const focus = model.get("focus");
    let target = null;
    if (focus && focus.seq !== revealed) {
      revealed = focus.seq;
      target = pane.querySelector(`[data-message-id="${Number(focus.message_id)}"]`);
    }
    const again = anchor === null ? null : pane.querySelector(`[data-message-id="${anchor}"]`);
    pending = () => {
      if (target) pane.scrollTop = target.offsetTop - Math.max(0, (pane.clientHeight - target.offsetHeight) / 2);
      else if (again) pane.scrollTop = again.offsetTop - offset;
      else pane.scrollTop = pane.scrollHeight;
    };
    settle();
  };
  pane.addEventListener("click", (event) => {
    const link = event.target.closest("[data-trace]");
    if (link) model.send({ event: "trace", message_id: Number(link.getAttribute("data-trace")) });
  });
  model.on("change:value", draw);
  model.on("change:focus", draw);
  draw();
}
export default { render };
"""


class ChatInput(anywidget.AnyWidget):
    """The message box: a ``<textarea>`` where Enter sends (with the exact text) and Shift+Enter adds a line.

    ``on_submit(callback)`` registers ``callback(text)``; :meth:`submit` does what Enter does (for code and tests).
    """

    _esm = _INPUT_ESM
    value = traitlets.Unicode("").tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._submit_callbacks: list[Any] = []
        self._quiet = False
        self.on_msg(self._on_frontend_msg)
        self.observe(self._on_value, names="value")

    def _on_value(self, change: dict[str, Any]) -> None:
        # a change made in Python (not one the browser synced: ipywidgets holds _property_lock for those) is
        # shown with an explicit message, since the browser ignores "value" coming back (see the JS above)
        if self._quiet or "value" in self._property_lock:
            return
        self.send({"do": "set", "text": change["new"]})

    def clear_quietly(self) -> None:
        """Empty the value without touching the browser's box (Enter already emptied it there, and the person
        may have typed the next message since)."""
        self._quiet = True
        try:
            self.value = ""
        finally:
            self._quiet = False

    def on_submit(self, callback: Any) -> None:
        """Call ``callback(text)`` with the text of each Enter."""
        self._submit_callbacks.append(callback)

    def submit(self, text: str | None = None) -> None:
        """What Enter does: the callbacks get ``text`` (default: the box's value)."""
        text = self.value if text is None else text
        for callback in list(self._submit_callbacks):
            callback(text)

    def focus(self) -> None:
        """Put the keyboard focus in the box (in every view of it)."""
        self.send({"do": "focus"})

    def _on_frontend_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "submit":
            text = content.get("text")
            # the box's text as the browser had it when Enter was pressed; an older front end sends none
            if isinstance(text, str):
                self.clear_quietly()
                self.submit(text)
            else:
                self.submit(None)


class HistoryView(anywidget.AnyWidget):
    """The conversation pane: ``value`` is its HTML (escaped by the chat's view, see ``chat_view``); updates keep
    the reader's place. :meth:`reveal` scrolls a message (``data-message-id``) into the middle of the pane."""

    _esm = _HISTORY_ESM
    value = traitlets.Unicode("").tag(sync=True)
    focus = traitlets.Dict({}).tag(sync=True)
    """``{"message_id": n, "seq": k}``: the message last asked for; ``seq`` grows so the same one can be asked again."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._trace_callbacks: list[Any] = []
        self.on_msg(self._on_frontend_msg)

    def reveal(self, message_id: int) -> None:
        """Scroll the pane to message ``message_id`` (it must be in ``value``)."""
        self.focus = {"message_id": int(message_id), "seq": int(self.focus.get("seq", 0)) + 1}

    def on_trace(self, callback: Any) -> None:
        """Call ``callback(message_id)`` when a message's "trace" link is clicked."""
        self._trace_callbacks.append(callback)

    def click_trace(self, message_id: int) -> None:
        """What a click on message ``message_id``'s "trace" link does (for code and tests)."""
        for callback in list(self._trace_callbacks):
            callback(int(message_id))

    def _on_frontend_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "trace":
            message_id = content.get("message_id")
            if isinstance(message_id, int) and not isinstance(message_id, bool):
                self.click_trace(message_id)
