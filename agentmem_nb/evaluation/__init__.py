"""How well memory is recalled, measured and kept: the LoCoMo importer (:mod:`agentmem_nb.evaluation.locomo`),
recall of the agent's retrieval (:mod:`agentmem_nb.evaluation.retrieval`: any@N / all@N, ``eval locomo``), and
regression tests of a user's own memory:

- :mod:`~agentmem_nb.evaluation.casefile` — recall case files (``*.memcases.yaml``) read into frozen value objects;
- :mod:`~agentmem_nb.evaluation.cases` — their runner and why each case passed or failed (``eval cases``:
  :mod:`~agentmem_nb.evaluation.cases_cli`; pytest: :mod:`agentmem_nb.testing.pytest_plugin`);
- :mod:`~agentmem_nb.evaluation.snapshot` — what each case retrieved and replied, and what moved since;
- :mod:`~agentmem_nb.evaluation.rebuild` and :mod:`~agentmem_nb.evaluation.replay` — a user's memory as it was at a
  moment, a logged turn replayed on it side by side with the original, logged turns exported as cases.

Nothing here is imported by the store, the agent or the widgets (but :mod:`agentmem_nb.widgets.cases`, which shows
case results); evaluation sits on top of them.
"""
