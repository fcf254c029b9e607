"""The chat page at ``/``: plain HTML, CSS and JavaScript shipped in the package (``agentmem_nb/api/static/``).

No build step and no CDN: the three files are served as they are, so the page works offline and on a machine with
no network. The script puts every stored text into the page with ``textContent`` (never ``innerHTML``), so a message
that holds markup is shown as the text it is; the content security policy of :mod:`agentmem_nb.api.guard` forbids
inline scripts and any origin but this server as a second line of defence.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from starlette.responses import FileResponse
from starlette.staticfiles import StaticFiles

__all__ = ["STATIC_DIR", "install_page"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Where the page's files live (package data, see ``pyproject.toml``)."""


def install_page(app: FastAPI) -> None:
    """Serve the chat page at ``/`` and its files under ``/static/``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8",
                            headers={"Cache-Control": "no-cache"})

    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
