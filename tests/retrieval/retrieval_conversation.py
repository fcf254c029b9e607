"""The small conversation the retrieval tests write (a module of its own, so a test file can import it by a name no
other folder's conftest shares)."""

from __future__ import annotations

import datetime as _dt

from agentmem_nb import UserMemory

ZONE = _dt.timezone(_dt.timedelta(hours=8))

# Three days, three threads; turn texts chosen so a few queries have one clearly right answer.
CONVERSATION: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "s1": ("2026-04-06", [
        ("user", "Hi! I adopted a beagle puppy last weekend."),
        ("assistant", "Congratulations! What is the puppy called?"),
        ("user", "Biscuit. He chews every shoe in the flat."),
        ("assistant", "Try giving Biscuit a chew toy instead."),
        ("user", "Good idea, thanks."),
    ]),
    "s2": ("2026-04-07", [
        ("user", "I started pottery classes on Tuesdays."),
        ("assistant", "Nice. What did you make first?"),
        ("user", "A lopsided blue bowl, but I love it."),
        ("assistant", "Handmade bowls have character."),
        ("user", "我上个月搬到杭州了，在一家电商公司当程序员。"),
        ("assistant", "杭州很美，西湖边散步很舒服。"),
    ]),
    "s3": ("2026-04-08", [
        ("user", "What should I cook tonight?"),
        ("assistant", "How about a mushroom risotto?"),
        ("user", "I ran the riverside 10k race in 52 minutes."),
        ("assistant", "That is a great time for a 10k."),
        ("user", "Biscuit waited for me at the finish line."),
    ]),
}


def write_conversation(user: UserMemory, conversation: dict[str, tuple[str, list[tuple[str, str]]]]) -> None:
    """Append every turn; turns of a thread one minute apart from 09:00 of its day."""
    for session_id, (day, turns) in conversation.items():
        start = _dt.datetime.fromisoformat(day + "T09:00:00").replace(tzinfo=ZONE)
        for i, (role, text) in enumerate(turns):
            user.append(session_id, role, text, ts=start + _dt.timedelta(minutes=i))
