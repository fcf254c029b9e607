"""The chat's ties to the Jupyter kernel it runs in: whether there is one, whether code runs for a cell, and
Kernel ▸ Interrupt for the turns that run in the chat's worker thread (:class:`KernelInterrupt`)."""

from __future__ import annotations

import threading
import weakref
from typing import Any, Protocol

__all__ = ["current_kernel", "in_kernel", "running_a_cell", "KernelInterrupt", "INTERRUPT"]


class _Stoppable(Protocol):
    """What Interrupt needs of a chat (:class:`~agentmem_nb.widgets.chat.ChatWidget`)."""

    @property
    def busy(self) -> bool: ...

    def stop(self) -> bool: ...


def current_kernel() -> Any:
    """The Jupyter kernel this code runs in, or ``None`` (a script, a test)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return getattr(get_ipython(), "kernel", None)


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where a widget event handler that runs a whole turn holds back the others)."""
    return current_kernel() is not None


def running_a_cell() -> bool:
    """True when the code runs for a notebook cell (not for a widget's own callback, nor in a worker thread)."""
    kernel = current_kernel()
    if kernel is None or threading.current_thread() is not threading.main_thread():
        return False
    try:
        parent = kernel.get_parent()
    except (AttributeError, TypeError):  # an older or a stand-in kernel without get_parent(): assume a callback
        return False
    return bool(parent) and parent.get("header", {}).get("msg_type") == "execute_request"


class KernelInterrupt:
    """Kernel ▸ Interrupt for the turns that run in a worker thread: it stops them like the Stop button.

    Jupyter interrupts a kernel with SIGINT, which ipykernel turns into ``KeyboardInterrupt`` in its main thread
    while that thread handles a message (a cell) and ignores otherwise. A turn started from the chat's box runs in
    a worker thread (and JupyterLab 4.6 delivers widget events in a kernel *subshell* thread, not the main one), so
    Interrupt used to reach nobody. A chat created in a cell therefore installs, from the main thread, a handler for
    the idle times, through the slot where ipykernel keeps the handler it restores after each message
    (``kernel.saved_sigint_handler``): SIGINT then stops every running chat turn, and does what it did before
    (nothing, when idle) when none runs. While a cell runs, ipykernel's own handler is in place as usual, so
    Interrupt still stops the cell (and a turn sent by ``send``). A kernel without that slot keeps its Interrupt.
    """

    def __init__(self) -> None:
        self.chats: weakref.WeakSet[_Stoppable] = weakref.WeakSet()
        self.installed = False
        self._previous: Any = None

    def install(self) -> None:
        """Put the handler in ipykernel's slot (only from the main thread, as a cell runs; once per kernel)."""
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        kernel = current_kernel()
        if kernel is None or not hasattr(kernel, "saved_sigint_handler"):
            return
        self._previous = kernel.saved_sigint_handler
        kernel.saved_sigint_handler = self._on_sigint  # ipykernel restores it when the current message is done
        self.installed = True

    def watch(self, chat: _Stoppable) -> None:
        """Let Interrupt stop ``chat``'s turns."""
        self.chats.add(chat)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        stopped = [chat.stop() for chat in list(self.chats) if chat.busy]
        if not any(stopped) and callable(self._previous):  # SIG_IGN / SIG_DFL are not callable: nothing to do
            self._previous(signum, frame)


INTERRUPT = KernelInterrupt()
"""The one handler of this kernel (ipykernel has one slot for it)."""
