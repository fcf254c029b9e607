"""Running the API: in the foreground (``agentmem-nb serve``) or in a background thread of a notebook.

::

    from agentmem_nb.api import serve_in_background
    server = serve_in_background(svc)        # the notebook's own ChatService: same store, same session locks
    server.url                               # 'http://127.0.0.1:43127' — open it, or hand it to a script
    server.stop()                            # or use it as a context manager

The socket is bound here, before uvicorn starts, so the address is known (and taken) at once even for port 0, and a
refused bind is an error in the caller's thread. :func:`~agentmem_nb.api.guard.check_bind` runs first: a
non-loopback address needs a token.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

from agentmem_nb.agent import ChatService
from agentmem_nb.api.app import create_app
from agentmem_nb.api.guard import check_bind
from agentmem_nb.errors import AgentMemError

__all__ = ["BackgroundServer", "serve_in_background", "bind_socket", "serve_forever", "url_of"]

STOP_TIMEOUT = 10.0
"""Seconds :meth:`BackgroundServer.stop` waits for open requests (a running turn) before giving up on them."""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free port the system picks).

    Raises:
        AgentMemError: the address cannot be bound (in use, not this machine's, no permission), with the reason.
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise AgentMemError(f"cannot listen on {host!r}: {exc.strerror or exc}; give an address of this machine, "
                            "e.g. 127.0.0.1") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise AgentMemError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
                            "(0 picks a free one)") from None
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port`` of a bound socket."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn_server(app: Any, *, access_log: bool) -> Any:
    import uvicorn

    # proxy_headers off: nothing sits in front of this server, so no X-Forwarded-* header is to be believed.
    config = uvicorn.Config(app, access_log=access_log, proxy_headers=False, server_header=False,
                            timeout_graceful_shutdown=int(STOP_TIMEOUT), log_level="info" if access_log else "warning")
    return uvicorn.Server(config)


def serve_forever(app: Any, sock: socket.socket, *, access_log: bool = True) -> None:
    """Serve ``app`` on ``sock`` until interrupted (Ctrl-C or SIGTERM end it cleanly)."""
    server = _uvicorn_server(app, access_log=access_log)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    finally:
        sock.close()


class BackgroundServer:
    """The API served from a background thread: :attr:`url`, :meth:`stop`, a context manager.

    Made by :func:`serve_in_background`; the server is answering when the constructor returns.
    """

    def __init__(self, app: Any, sock: socket.socket) -> None:
        self.app = app
        self.url = url_of(sock)
        """Where it answers, e.g. ``http://127.0.0.1:43127``."""
        self._sock = sock
        self._server = _uvicorn_server(app, access_log=False)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"agentmem-api {self.url}", daemon=True)
        self._thread.start()
        while not self._server.started:  # uvicorn sets it once it accepts; a failed start ends the thread instead
            self._thread.join(0.01)
            if not self._thread.is_alive():
                sock.close()
                raise AgentMemError(f"the API server on {self.url} did not start: {self._failure or 'see the log'}")

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._sock]))
        except BaseException as exc:  # kept for the starting thread's error message; the thread ends either way
            self._failure = exc

    def __repr__(self) -> str:
        return f"BackgroundServer(url={self.url!r}, running={self.running})"

    def _repr_html_(self) -> str:
        from html import escape

        state = "running" if self.running else "stopped"
        return f'agentmem_nb API {state} at <a href="{escape(self.url)}/" target="_blank">{escape(self.url)}</a>'

    @property
    def running(self) -> bool:
        """True until :meth:`stop` (or a failure) ends it."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop answering, let open requests finish (up to :data:`STOP_TIMEOUT` seconds), free the port."""
        self._server.should_exit = True
        self._thread.join(STOP_TIMEOUT + 5)
        self._sock.close()

    def __enter__(self) -> BackgroundServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_background(service: ChatService, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                        **options: Any) -> BackgroundServer:
    """Serve the API and chat page over ``service`` (and its store) from a background thread.

    A notebook passes the service its widgets use, so both see the same memory and take the same session locks.
    ``options`` go to :func:`~agentmem_nb.api.create_app` (``max_body_bytes``, ``cors_origins``, ``facts``).

    Raises:
        ConfigError: ``host`` is not a loopback address and there is no ``token``.
        AgentMemError: the address cannot be bound.
    """
    check_bind(host, token)
    app = create_app(service.store, service, token=token, **options)
    return BackgroundServer(app, bind_socket(host, port))
