"""``agentmem-nb serve``: the HTTP API and chat page (:mod:`agentmem_nb.api`) on uvicorn, in the foreground.

FastAPI and uvicorn are imported when the command runs, so ``agentmem-nb --help`` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys

from agentmem_nb.cli import whole_number
from agentmem_nb.errors import ConfigError

__all__ = ["add_parser"]

TOKEN_ENV = "AGENTMEM_API_TOKEN"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``serve`` subcommand."""
    p = sub.add_parser("serve", help="serve the HTTP API and the chat page (the original demo's endpoints, and more)")
    # --root here too, so `agentmem-nb serve --root DIR` works as the issue writes it (the global one still does).
    p.add_argument("--root", dest="serve_root", default=None, metavar="DIR",
                   help="memory folder (default: the global --root, $AGENTMEM_ROOT or ./memory)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: %(default)s; any other needs --token)")
    p.add_argument("--port", type=whole_number(0, 65535), default=8000, help="port (default: %(default)s; 0: any free)")
    p.add_argument("--token", default=None,
                   help=f"bearer token every endpoint but /api/health requires (default: ${TOKEN_ENV}; prefer the "
                        "variable: a command line is visible to other users of the machine)")
    p.add_argument("--config", default=None,
                   help="model configuration (default: $AGENTMEM_CONFIG, else config/llm.yaml if it exists, else the "
                        "offline model)")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="allow browser calls from this origin (repeatable; default: none, CORS off)")
    p.add_argument("--max-body", type=whole_number(1024), default=1 << 20, metavar="BYTES",
                   help="largest request body accepted (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no access log")
    p.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    root = args.serve_root or args.root
    from agentmem_nb.store.memory_store import is_database_url

    if "://" in root and not is_database_url(root):
        raise ConfigError(f"--root {root.split('://', 1)[0]}://…: there is no store backend for such URLs: give a "
                          "memory folder or a postgresql:// URL")
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None

    from agentmem_nb.api.guard import check_bind

    check_bind(args.host, token)  # before anything heavy is imported or any port is taken

    from agentmem_nb.agent import ChatService, load_config
    from agentmem_nb.api import create_app
    from agentmem_nb.api.server import bind_socket, serve_forever, url_of
    from agentmem_nb.store import MemoryStore

    store = MemoryStore(root, zone=args.zone)
    service = ChatService(store, config=load_config(args.config))
    app = create_app(store, service, token=token, max_body_bytes=args.max_body, cors_origins=args.cors_origin)
    sock = bind_socket(args.host, args.port)
    model = "offline model" if service.offline else f"model {service.model_name}"
    guard = "token required" if token else "no token, this machine only"
    # The first line names the address (port 0 gives a free one): scripts and tests read it.
    where = getattr(store, "root", None)  # a database store has no folder: its repr names it without credentials
    memory = repr(str(where)) if where is not None else repr(store)
    print(f"agentmem-nb serving {url_of(sock)}/ (memory {memory}, {model}, {guard})", flush=True)
    serve_forever(app, sock, access_log=not args.quiet)
    print("agentmem-nb: server stopped", file=sys.stderr)
    return 0
