"""Recognising credentials in text, so the model cannot file them away in a memory.

`find_secret(text)` is the one entry point: the label of the first rule that matches, or None.
The rules are the ideas of maintained scanners (gitleaks' rule set, detect-secrets' plugins and
its false-positive filters), measured on tests/adversarial/secret_corpus.py:

- provider tokens by their documented prefix and shape (`ghp_`, `sk-ant-`, `AKIA`, `glpat-`…;
  the table is secret_providers.py),
  private key headers in any case, JSON web tokens, Slack and Discord webhook URLs;
- credentials in URLs (`postgres://user:pw@host`), Authorization headers, `curl -u user:pw`,
  `--password x` flags, `.netrc` and `.pgpass` lines, XML elements;
- `name = value` in env, YAML, JSON, TOML and prose forms (`DB_PASSWORD=…`, `"api_key": "…"`,
  `the password is …`) when the name ends in a password, secret, token or API-key word and the
  value looks like a real one: not a placeholder (`<token>`, `${VAR}`, `***`, `None`, `changeme`),
  not code (`os.environ[…]`, `settings.KEY`, a type) and not a number or plain word.

Text is normalised first, so that what `cat` shows as a token is checked as one: escape sequences
(`\x1b[0m`, OSC strings), controls (C0 but line break and tab, DEL, C1 such as NEL) and every
character drawn as nothing but spaces (untrusted's one definition: format characters, line and
paragraph separators, Default_Ignorable code points, U+2800…) are dropped, and compatibility forms
folded (NFKC), so a zero-width space inside a token or a full-width `ＰＡＳＳＷＯＲＤ` hides nothing.
A text with escape sequences is also checked with only their ESC dropped (an OSC title's body).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

from mini_claude.memory.secret_providers import PROVIDER_RULES, LazyPattern
from mini_claude.untrusted import DRAWN_AS_NOTHING_CLASS

# --- credentials whose value must be checked (is it a placeholder?) --------------------------
_URL_PASSWORD = LazyPattern(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]*:([^\s/?#@\"'<>]+)@")
_AUTH_HEADER = LazyPattern(
    r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|apikey)\s+"
    r"([A-Za-z0-9._~+/=-]{8,})"
)
_CURL_USER = LazyPattern(r"(?:^|\s)(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:([^\s\"']+)")
_CLI_FLAG = LazyPattern(
    r"(?i)(?:^|\s)--(?:password|passwd|pass|token|api-?key|secret|client-secret|auth-token)(?:=|[ \t]+)"
    r"[\"']?([^\s\"']+)"
)
_NETRC = LazyPattern(r"(?is)\bmachine\s+\S+.{0,200}?\bpassword\s+(\S+)")
_PGPASS = LazyPattern(r"(?m)(?:^|\s)[^\s:#]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:([^\s:]+)$")
_XML_ELEMENT = LazyPattern(
    r"(?i)<((?:\w+[_-])?(?:password|passwd|secret|token|api[_-]?key|client[_-]?secret))>([^<\s]+)</\1>"
)
# `name = value` (also `name: value`, `"name": "value"`, `| name | value |`, `("name", "value")`):
# the name is checked word by word in Python (see _key_kind).
_ASSIGNMENT = LazyPattern(
    r"(?<![\w.-])(?P<key>[A-Za-z_][\w.-]{0,80})(?P<kq>[\"']?)[ \t]*(?P<sep>:=|=>|=|:(?![:/])|\||,)[ \t]*"
    # A lookahead, so that a value holding the next assignment (`setup: DB_PASSWORD=…`) is searched too.
    r"(?=(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s\"'`,;]+)?(?P<rest>[^\n]*))"
)
_WORD_BEFORE = LazyPattern(r"([A-Za-z]+)[ \t]+$")
WORD_BEFORE_CHARS = 40  # how far back the word before a one-word name is looked for
_PROSE = LazyPattern(
    r"(?i)\b(?P<key>password|passphrase|passwd|api[ _-]?key|secret[ _-]?key|access[ _-]?key|"
    r"(?:auth[ _-]?|access[ _-]?|api[ _-]?)?token)\s+(?:is|was)\s*:?\s*(?P<value>[\"'`]?[^\s\"'`]+)"
)
_KEYWORD = LazyPattern(r"(?i)pass|pwd|secret|token|key|auth|cred")

_WORDS = LazyPattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_PASSWORD_WORDS = ("password", "passwd", "passphrase")
_SHORT_PASSWORD_WORDS = frozenset({"pass", "pwd", "pw", "psw"})
_SECRET_WORDS = ("secret", "token", "apikey", "credential", "credentials", "creds", "auth")
# Tokens that page, order or deduplicate requests (AWS NextToken, ClientToken) grant nothing.
_HARMLESS_TOKEN_WORDS = frozenset(
    {"next", "page", "continuation", "pagination", "idempotency", "client", "lock", "sync", "cursor",
     "resume", "marker", "change", "state", "csrf", "xsrf", "forward", "backward"}
)  # fmt: skip
_TRAILING_WORDS = frozenset({"base", "value", "raw", "plain", "plaintext"})
# A name ending in "key" is a credential only after one of these (API key, not sort key).
_KEY_QUALIFIERS = frozenset(
    {"api", "secret", "access", "private", "signing", "encryption", "master", "auth", "client", "service",
     "account", "license", "app", "admin", "deploy", "webhook", "session", "storage", "subscription",
     "shared", "hmac", "jwt", "consumer", "x"}
)  # fmt: skip
_PLACEHOLDER_WORDS = frozenset(
    {"none", "null", "nil", "true", "false", "yes", "no", "required", "optional", "empty", "hidden",
     "redacted", "removed", "changeme", "secret", "password", "passwd", "token", "example", "placeholder",
     "todo", "tbd", "n/a", "na", "unset", "undefined", "default", "string", "str", "int", "bool", "any",
     "blank", "masked", "sensitive", "encrypted", "xxx", "test", "dummy", "fake", "sample"}
)  # fmt: skip
# Words that make up placeholder values such as EXAMPLE-PASSWORD or your-api-key-here.
_FILLER_WORDS = _PLACEHOLDER_WORDS | {"here", "your", "my", "api", "key", "change", "me", "the", "value"}
_PLACEHOLDER_MARKS = (
    "...", "…", "{{", "}}", "${", "<", ">", "(", "[", "***", "os.environ", "getenv", "process.env"
)  # fmt: skip
_PLACEHOLDER = LazyPattern(
    r"(?i)^[$%&{*@]|^(?:your|my|the|some|insert|replace|enter|put)[_-]|x{4,}|^(.)\1*$"
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # settings.SECRET_KEY, self.token: a reference
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"  # DB_PASSWORD: the name of a variable
    r"|^(?:/|~/|\./|\.\./|[a-z][a-z0-9+.-]*://|arn:)"  # a path, a URL, an AWS resource name
    r"|^[a-z]+(?:_[a-z]+)+$"  # downscoped_credentials: an identifier
)
# ECMA-48 escape sequences, 7- and 8-bit: CSI (`\x1b[0m`, `\x9b…`), strings (OSC, DCS, APC…) up
# to their terminator, and two-character escapes (`\x1b(B`, `\x1bc`). Their text is never shown.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"
)
_ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]+")  # all but line break and tab
# Drawn as nothing (untrusted's definition: Cc, Cf, Zl, Zp, Default_Ignorable, U+2800…) but the
# spaces, line break and tab the rules read as separators.
_INVISIBLE = LazyPattern(rf"(?V1)[[{DRAWN_AS_NOTHING_CLASS}]--[\p{{Zs}}\n\t]]+", unicode_properties=True)
MIN_PASSWORD_CHARS = 6
MIN_PIN_CHARS = 8  # a password of digits only: shorter ones are counts, ports, years
MIN_TOKEN_CHARS = 12
RANDOM_TOKEN_CHARS = 20  # a token this long without a digit counts if its characters look random
RANDOM_ENTROPY_BITS = 3.5  # per character, as gitleaks' generic rule


def find_secret(text: str) -> str | None:
    """What kind of credential `text` seems to contain (a label naming the rule), or None."""
    text = text.replace('\\"', '"').replace("\\'", "'")  # JSON written inside a JSON string
    for variant in _variants(text):
        label = _rule_matched(_normalized(variant))
        if label:
            return label
    return None


def _variants(text: str) -> tuple[str, ...]:
    """`text` without its escape sequences (what a terminal shows); when it has any, also with
    only their introducers dropped (a secret inside an OSC title is still in the file)."""
    if "\x1b" not in text and "\x9b" not in text:
        return (text,)
    return (_ESCAPE_SEQUENCE.sub("", text), text.replace("\x1b", "").replace("\x9b", ""))


def _rule_matched(text: str) -> str | None:
    for label, pattern in PROVIDER_RULES:
        if any(_starts_a_word(text, match.start()) for match in pattern.pattern.finditer(text)):
            return label
    for label, pattern, kind in _VALUE_RULES:
        for match in pattern.pattern.finditer(text):
            if _looks_like_secret(match.group(match.lastindex or 1), kind, quoted=False, env_style=True):
                return label
    return _assigned_secret(text) if _KEYWORD.pattern.search(text) else None


def _starts_a_word(text: str, index: int) -> bool:
    return index == 0 or not (text[index - 1].isalnum() or text[index - 1] == "_")


def _normalized(text: str) -> str:
    """`text` as the rules read it: controls and characters drawn as nothing dropped, NFKC."""
    text = text.replace("\r\n", "\n")
    if text.isascii():  # ASCII has controls too: only the check for them is cheaper
        return _ASCII_CONTROLS.sub("", text)
    text = _INVISIBLE.pattern.sub("", text)
    if unicodedata.is_normalized("NFKC", text):
        return text
    return _INVISIBLE.pattern.sub("", unicodedata.normalize("NFKC", text))  # a full-width filler folds to one


_VALUE_RULES: tuple[tuple[str, LazyPattern, str], ...] = (
    ("a password inside a URL (scheme://user:password@host)", _URL_PASSWORD, "password"),
    ("an Authorization header with credentials", _AUTH_HEADER, "password"),
    ("a password on a command line (-u user:password)", _CURL_USER, "password"),
    ("a password or token on a command line (--password …)", _CLI_FLAG, "password"),
    ("a password in .netrc form (machine … password …)", _NETRC, "password"),
    ("a password in a .pgpass line (host:port:db:user:password)", _PGPASS, "password"),
    ("a password or token in XML (<password>…</password>)", _XML_ELEMENT, "password"),
)


def _assigned_secret(text: str) -> str | None:
    for match in _ASSIGNMENT.pattern.finditer(text):
        key, value = match["key"], match["value"] or ""
        if match["sep"] == ":" and text[match.start() - 1 : match.start()] == ":":
            continue  # a field of a colon-separated name (arn:aws:secretsmanager:…:secret:name)
        kind = _key_kind(key, text[max(0, match.start() - WORD_BEFORE_CHARS) : match.start()])
        if kind is None:
            continue
        rest = match["rest"]
        if value in ("|", ">", "|-", ">-") and not rest.strip():  # a YAML block: the next line
            following = text[match.end() + len(value) + len(rest) + 1 :].split("\n", 1)[0].split()
            value = following[0] if following else ""
        quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`"
        if match["sep"] == "," and not (match["kq"] and quoted and not value[1:-1].isalpha()):
            continue  # only `define('DB_PASSWORD', 's3cret')`: not every argument list
        env_style = match["sep"] == "=" and not match["kq"] and match.group(0)[len(key)] != " "
        if quoted:
            value = value[1:-1]
        elif rest.strip() and value.isalpha():
            continue  # `password: stored in the vault`: prose, not a value
        if _looks_like_secret(value, kind, quoted=quoted, env_style=env_style):
            noun = "a password" if kind == "password" else "a secret or token"
            return f"{noun} (the value of {key})"
    for match in _PROSE.pattern.finditer(text):
        kind = "password" if match["key"].lower().startswith("pass") else "token"
        value = match["value"].strip("\"'`").rstrip(".,;:!?)") or ""
        if not value.isalpha() and _looks_like_secret(value, kind, quoted=False, env_style=False):
            noun = "a password" if kind == "password" else "an API key or token"
            return f"{noun} (written as 'the {match['key'].lower()} is …')"
    return None


def _key_kind(key: str, before: str) -> str | None:
    """'password' or 'token' when the name says it holds one (by its last word), else None."""
    words = [word.lower() for word in _WORDS.pattern.findall(key)]
    if not words:
        return None
    if len(words) == 1:  # `API key: …`, `db password: …`: the word before belongs to the name
        previous = _WORD_BEFORE.pattern.search(before)
        if previous:
            words.insert(0, previous.group(1).lower())
    if len(words) > 1 and words[-1] in _TRAILING_WORDS:  # SECRET_KEY_BASE holds a secret key
        words.pop()
    last = words[-1].removesuffix("s") if len(words[-1]) > 4 else words[-1]
    if last.endswith(_PASSWORD_WORDS) or last in _SHORT_PASSWORD_WORDS:
        return "password"
    if last == "token" and len(words) > 1 and words[-2] in _HARMLESS_TOKEN_WORDS:
        return None
    if last.endswith(_SECRET_WORDS) or (last == "key" and _KEY_QUALIFIERS.intersection(words[:-1])):
        return "token"
    return None


def _looks_like_secret(value: str, kind: str, *, quoted: bool, env_style: bool) -> bool:
    """Whether `value` is a real credential rather than a placeholder, a reference or a word."""
    value = value.strip()
    if not quoted:
        value = value.rstrip(".,;:!?)]}")  # the end of a sentence or of a call, not of the value
    if not value or value.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER.pattern.search(value):
        return False
    if all(word.lower() in _FILLER_WORDS for word in re.findall(r"[A-Za-z]+|\d+", value)):
        return False
    if any(mark in value for mark in _PLACEHOLDER_MARKS):
        return False
    has_digit = any(char.isdigit() for char in value)
    has_letter = any(char.isalpha() for char in value)
    if kind == "password":
        if len(value) < MIN_PASSWORD_CHARS or (not has_letter and len(value) < MIN_PIN_CHARS):
            return False
        # An unquoted single word is a type or a word (`password: SecretStr`), except in an env file.
        return quoted or env_style or not value.isalpha()
    if len(value) < MIN_TOKEN_CHARS or " " in value:
        return False
    if has_digit and has_letter:
        return True
    return len(value) >= RANDOM_TOKEN_CHARS and _entropy(value) >= RANDOM_ENTROPY_BITS


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
