"""The memory agent over HTTP: the original demo's four REST endpoints and chat page, and more (FastAPI on uvicorn).

::

    agentmem-nb serve --root memory            # http://127.0.0.1:8000/ : the chat page; /api/... : the API

    from agentmem_nb.api import create_app, serve_in_background
    app = create_app(store, service)           # embed it (tests, another ASGI server)
    server = serve_in_background(service)      # from a notebook: same store, same session locks; server.stop()

This layer sits above :mod:`agentmem_nb.agent` (beside the widgets): it calls the service and the store's public
API and nothing below them. Importing it imports FastAPI and the agent (langchain); ``agentmem_nb.store`` does not
import it. See :mod:`agentmem_nb.api.app` for the modules and :mod:`agentmem_nb.api.guard` for what is refused.
"""

from agentmem_nb.api.app import create_app
from agentmem_nb.api.guard import check_bind
from agentmem_nb.api.server import BackgroundServer, serve_in_background

__all__ = ["create_app", "serve_in_background", "BackgroundServer", "check_bind"]
