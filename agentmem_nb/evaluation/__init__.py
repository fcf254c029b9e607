"""How well memory is recalled, measured: the LoCoMo importer (:mod:`agentmem_nb.evaluation.locomo`) and every
``agentmem-nb eval`` command (:mod:`agentmem_nb.evaluation.retrieval`: recall any@N / all@N of the agent's retrieval).

Nothing here is imported by the store, the agent or the widgets; evaluation sits on top of them.
"""
