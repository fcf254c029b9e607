"""Extracting facts from what the user says: the layer between retrieval and the agent.

``store ← retrieval ← facts ← agent``: the store keeps fact events (:mod:`agentmem_nb.store.facts`); this package reads
statements out of messages (:class:`OfflineExtractor`, English and Chinese grammar patterns) and writes them through
:func:`record_message`; the agent runs it after each reply (durably queued) and ranks facts for the context.
"""

from agentmem_nb.facts.extract import Extractor, OfflineExtractor, last_key_of, record_message

__all__ = ["Extractor", "OfflineExtractor", "record_message", "last_key_of"]
