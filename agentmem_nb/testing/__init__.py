"""Test doubles and sample data for your own tests and notebooks, in one place.

- :mod:`agentmem_nb.testing.fake_openai`: a scripted OpenAI-compatible server on 127.0.0.1 (JSON and SSE, faults
  such as cut streams, stalls and HTTP errors), to drive the real ``ChatOpenAI`` client path without a network.
- :class:`~agentmem_nb.agent.OfflineChatModel`: the deterministic offline model (the agent's default without a key),
  which drives the same graph with real tool calls.
- :mod:`agentmem_nb.testing.demo`: the demo user (conversations in English and Chinese with real tool calls) and
  :class:`~agentmem_nb.testing.demo.SteppingClock`, a clock that advances a fixed step per call (stable outputs).
- :mod:`agentmem_nb.testing.pytest_plugin`: pytest collects ``*.memcases.yaml`` recall case files, one test per case
  (installed as a ``pytest11`` entry point); :mod:`agentmem_nb.testing.assertions`: ``assert_recalls`` and
  ``assert_not_recalled`` for Python tests.

Importing this package loads nothing heavy; each module imports what it needs.
"""
