"""Jupyter widgets over the store and the agent: ChatWidget, MemoryInspector, ToolTimeline."""
