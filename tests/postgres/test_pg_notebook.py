"""``notebooks/09_postgres.ipynb`` on PostgreSQL: nbval runs it without a server (on a folder); here it runs with
``AGENTMEM_DATABASE_URL`` set to a throwaway database, every cell's assertions included."""

from __future__ import annotations

from pathlib import Path

import nbformat
import psycopg
import pytest
from nbclient import NotebookClient
from pg_server import PASSWORD

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "09_postgres.ipynb"


def test_the_postgres_notebook_runs_on_a_database(pg_url: str, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTMEM_DATABASE_URL", pg_url)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                   ).execute()
    text = "\n".join(str(output.get("text", "")) for cell in notebook.cells if cell.cell_type == "code"
                     for output in cell.get("outputs", []))
    assert "PostgresStore" in text and "No AGENTMEM_DATABASE_URL" not in text
    assert PASSWORD not in text  # the URL's password never shows in an output
    with psycopg.connect(pg_url) as conn:  # the notebook wrote to the database, not to a folder
        users = [row[0] for row in conn.execute("SELECT user_id FROM am_users ORDER BY user_id")]
    assert len(users) == 2 and users[0].startswith("nb09-") and users[1].endswith("-from-files")
