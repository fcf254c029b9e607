"""Secrets hidden from every text that leaves the process: :func:`redact`.

Error text is assembled from what servers and libraries say, and they quote what they were given: a 401 body repeats
the key ("Incorrect API key provided: sk-…"), a proxy's 500 echoes the ``Authorization`` header, a connection error
names the URL with its ``user:password@``, a YAML number in ``api_key`` turns up in "must be text, got int …".
So every boundary where text leaves — a turn's reply and its dialogue log line, a config error and ``repr(config)``,
a widget's error box, the command line's output — passes it through :func:`redact`, which replaces

- every secret this process was configured with (:func:`register_secret`; constructing an
  :class:`~agentmem_nb.agent.LLMConfig` registers its key and the credentials in its ``base_url``), and
- what looks like a credential whatever its value: ``sk-…`` key shapes, ``Bearer``/``Basic`` header values,
  ``Authorization:`` / ``api_key=`` / ``token=`` / ``password=`` / ``key=`` values (a URL's query string included),
  and the ``user:password@`` part of URLs.

The registry is process-wide on purpose: a widget's error box or the command line's last-resort handler never sees
the config that holds the key, and a secret seen once must stay hidden everywhere. A registered value of
:data:`MIN_SECRET_CHARS` or more is replaced wherever it stands; a shorter one (``sk-1234``, a password ``hunter2``)
only where it stands as a whole token, not inside a longer word, so that hiding it does not garble other text. Values
under :data:`MIN_TOKEN_CHARS` are not secrets anyone could protect and are left alone.

Standard library only: the store, the command line and the widgets can all import it.

>>> redact("Incorrect API key provided: sk-proj-abcdefghijklmnop1234")
'Incorrect API key provided: sk-<redacted>'
>>> redact("could not reach http://bob:hunter2@proxy.local/v1")
'could not reach http://<redacted>@proxy.local/v1'
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["REDACTED", "MIN_SECRET_CHARS", "MIN_TOKEN_CHARS", "redact", "redact_url", "register_secret", "url_secrets"]

REDACTED = "<redacted>"
"""What a secret is replaced with."""

MIN_SECRET_CHARS = 8
"""Registered values this long are replaced wherever they stand; shorter ones only as whole tokens."""

MIN_TOKEN_CHARS = 4
"""Registered values shorter than this are not replaced (see the module docstring)."""

# scheme://userinfo@ — the userinfo (user, password, or a token alone) is a credential whatever it looks like. Greedy
# up to the authority's last "@" (a password may hold a raw "@"); "/", "?" and "#" end the authority.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/?#'\"<>]+)@")
# Header values: "Bearer <token>", "Basic <base64>" (the base64 must hold a digit, +, / or = so that prose such as
# "basic usage" is left alone).
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{6,}")
_BASIC = re.compile(r"(?i)\b(basic\s+)(?=[A-Za-z]*[0-9+/=])[A-Za-z0-9+/]{6,}={0,2}")
# "Authorization: xyz", "api_key=xyz", '"x-api-key": "xyz"' (the value; a Bearer/Basic scheme word is kept, its token
# is the rule above). The lookbehind lets AGENTMEM_API_KEY=… match too; "API key: check …" (prose, with a space) does not.
_KEYED = re.compile(r"(?i)(?<![a-z0-9])((?:proxy-)?authorization|x-api-key|api[-_]?key|(?:access|refresh|id)?[-_]?token"
                    r"|client[-_]?secret|secret|passw(?:or)?d|(?:key|sig(?:nature)?)(?==))([\"']?\s*[:=]\s*[\"']?)"
                    r"(?!(?:bearer|basic)\s)([^\s\"',;}<>]+)")
# OpenAI-style keys (sk-…, sk-proj-…, sk-ant-…), also half-masked echoes such as sk-proj-****abcd.
_SK_KEY = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-*]{16,}")

_registered: tuple[str, ...] = ()
_lock = threading.Lock()


def register_secret(value: object) -> None:
    """Hide ``value`` from every later :func:`redact` in this process (values under :data:`MIN_SECRET_CHARS`
    characters, and non-text, are ignored)."""
    global _registered
    if not isinstance(value, str) or len(value.strip()) < MIN_TOKEN_CHARS:
        return
    with _lock:
        if value not in _registered:
            # longest first, so a secret that contains another is replaced whole
            _registered = tuple(sorted({*_registered, value}, key=len, reverse=True))


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL carries: its userinfo as written and decoded, the password, and the ``Basic``
    token an HTTP client sends for it (a server may echo that header back)."""
    found: list[str] = []
    found += [value for _, value in parse_qsl(urlsplit(url).query) if value]  # ?key=…: a key carried in the URL
    for match in _URL_USERINFO.finditer(url):
        userinfo = match.group(2)
        user, _, password = userinfo.partition(":")
        plain = f"{unquote(user)}:{unquote(password)}"
        token = base64.b64encode(plain.encode("utf-8", errors="surrogatepass")).decode("ascii")
        found += [userinfo, unquote(userinfo), password, unquote(password), token]
    return tuple(dict.fromkeys(s for s in found if s))


def redact_url(url: str) -> str:
    """``url`` with its userinfo (``user:password@``) replaced, for display."""
    return _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", url)


def redact(text: object, *, secrets: Iterable[str] = ()) -> str:
    """``str(text)`` with every registered secret, every one of ``secrets`` and every credential-shaped value
    replaced by :data:`REDACTED` (see the module docstring for what counts)."""
    value = str(text)
    extra = [s for s in secrets if isinstance(s, str) and len(s.strip()) >= MIN_TOKEN_CHARS]
    for secret in sorted({*extra, *_registered}, key=len, reverse=True):
        if secret not in value:
            continue
        if len(secret) >= MIN_SECRET_CHARS:
            value = value.replace(secret, REDACTED)
        else:  # short: only as a whole token ("sk-1234", not the "1234" inside "12345")
            value = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", REDACTED, value)
    value = redact_url(value)
    value = _BEARER.sub(lambda m: m.group(1) + REDACTED, value)
    value = _BASIC.sub(lambda m: m.group(1) + REDACTED, value)
    value = _KEYED.sub(lambda m: m.group(1) + m.group(2) + REDACTED, value)
    return _SK_KEY.sub("sk-" + REDACTED, value)
