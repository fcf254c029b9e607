"""``agentmem-nb chat`` (a terminal chat) and ``agentmem-nb seed`` (the demo user)."""

from __future__ import annotations

import argparse
import sys

from agentmem_nb.cli import zone_name
from agentmem_nb.textutil import displayable

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``chat`` and ``seed`` subcommands."""
    p = sub.add_parser("chat", help="chat with the memory agent in the terminal")
    p.add_argument("--user", default="me")
    p.add_argument("--session", default=None, help="continue this conversation (default: start a new one)")
    # None, not "config/llm.yaml": only a file the user names must exist; the default one is optional (offline model).
    p.add_argument("--config", default=None,
                   help="model configuration (default: $AGENTMEM_CONFIG, else config/llm.yaml if it exists, else the "
                        "offline model)")
    p.add_argument("--show-tools", action="store_true", help="print each tool call and its output")
    p.set_defaults(func=_chat)

    p = sub.add_parser("seed", help="write the demo user's conversations (English and Chinese, with tool calls)")
    p.add_argument("--user", default="demo")
    p.add_argument("--demo-zone", default="Europe/Paris", type=zone_name, help="zone the demo's days are written in")
    p.set_defaults(func=_seed)


def _chat(args: argparse.Namespace) -> int:
    from agentmem_nb.agent import ChatService, load_config
    from agentmem_nb.store import MemoryStore

    store = MemoryStore(args.root, zone=args.zone)
    service = ChatService(store, config=load_config(args.config))
    session = args.session or service.new_conversation(args.user)
    banner = ("offline model (set llm.api_key in config/llm.yaml, or AGENTMEM_API_KEY, for a real one)"
              if service.offline else service.model_name)
    print(displayable(f"user {args.user!r}, conversation {session!r}, {banner}. Ctrl-D to leave."))
    while True:
        try:
            text = input("you> ").strip()
        except EOFError:
            print()
            return 0
        if not text:
            continue
        result = service.turn(args.user, session, text)
        if args.show_tools:
            for call in result.tool_calls:
                print(displayable(f"  [{call.name}] {call.input} -> {call.output[:200]!r}"))
        print(displayable(f"agent> {result.reply}"))  # stored text may hold a lone surrogate: print valid text
        sys.stdout.flush()


def _seed(args: argparse.Namespace) -> int:
    from agentmem_nb.testing.demo import demo_store, seed_demo

    store = demo_store(args.root, zone=args.demo_zone)
    turns = seed_demo(store, user_id=args.user, progress=print)
    user = store.user(args.user)
    print(f"seeded {turns} turns for {args.user!r} in {user.directory} "
          f"({len(user.session_ids())} conversations over {len(user.days())} days)")
    return 0
