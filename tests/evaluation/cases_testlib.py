"""Sample data shared by the recall-case tests."""

from __future__ import annotations

CONVERSATION = """\
user: maya
session: s1
model: offline
zone: Europe/Paris
conversation:
  - {session: s1, role: user, content: "My sister Ana lives in Porto.", ts: "2026-04-06T09:00:00+02:00"}
  - {session: s1, role: assistant, content: "Noted."}
  - {session: s1, role: user, content: "I work as a nurse at the city hospital.", ts: "2026-04-06T09:05:00+02:00"}
  - {session: s1, role: assistant, content: "Good to know."}
  - {session: s2, role: user, content: "We hiked the Monts d'Or last Sunday.", ts: "2026-04-07T18:00:00+02:00"}
  - {session: s2, role: assistant, content: "Sounds lovely."}
"""

CAR = """\
user: maya
model: offline
conversation:
  - {role: user, content: "My car is a red Fiat."}
  - {role: assistant, content: "Nice."}
  - {role: user, content: "The car needs washing, the car is dirty."}
  - {role: user, content: "I drove the car to work, the car was slow."}
  - {role: user, content: "The car radio is broken, my car again."}
  - {role: user, content: "Car insurance for the car is due."}
  - {session: s2, role: user, content: "The bike is green."}
"""
"""Many messages about a car, the evidence (its colour) ranked below them; one more thread about a bike."""
