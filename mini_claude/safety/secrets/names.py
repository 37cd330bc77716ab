"""Credentials written as a value given to a name: `DB_PASSWORD=…`, `password: …`, `"api_key": "…"`,
`DB_PASSWORD ?= …`, `apiKey: string = '…'`, `- name: DB_PASSWORD` + `value: …`, `set -gx
DB_PASSWORD …`. The name decides the kind (key_kind); secret_values decides whether the value is
a real one."""

from __future__ import annotations

import re

from mini_claude.safety.secrets.providers import LazyPattern
from mini_claude.safety.secrets.text import mentions
from mini_claude.safety.secrets.values import PASSPHRASE, PASSWORD, PIN, TOKEN, looks_like_secret

# What is read of a value and of the rest of its line: each pattern's work at a position stays
# bounded, so a long line of `key: key: key: …` costs its length, not its length squared. No
# password is this long, and a longer token has its own rule (a JWT, a private key's header).
MAX_VALUE_CHARS = 512
MAX_REST_CHARS = 256
_QUOTED = (
    rf"\"[^\"\n]{{0,{MAX_VALUE_CHARS}}}\"|'[^'\n]{{0,{MAX_VALUE_CHARS}}}'|`[^`\n]{{0,{MAX_VALUE_CHARS}}}`"
)
_BARE = rf"{{1,{MAX_VALUE_CHARS}}}"  # the repeat of an unquoted value's characters
# `name = value` (also `name: value`, `"name": "value"`, `| name | value |`, `("name", "value")`,
# Makefile's `?=` `:=` `+=`): the name is checked word by word in Python (see key_kind).
_ASSIGNMENT = LazyPattern(
    r"(?<![\w.-])(?P<key>[^\W\d][\w.-]{0,80})(?P<kq>[\"']?)[ \t]*"
    r"(?P<sep>\?=|::?=|\+=|=>|=|:(?![:/])|\||,)[ \t]*"
    # A lookahead, so that a value holding the next assignment (`setup: DB_PASSWORD=…`) is searched too.
    rf"(?=(?P<value>{_QUOTED}|[^\s\"'`,;]{_BARE})?(?P<rest>[^\n]{{0,{MAX_REST_CHARS}}}))"
)
# After `name:`, a type and a literal: `DB_PASSWORD: str = "…"`, `let api_key: &str = "…"`.
_TYPE_THEN_LITERAL = LazyPattern(
    r"&?(?:'static[ \t]+)?[A-Za-z_][\w.\[\]<>|, ]{0,40}?[ \t]*=[ \t]*"
    rf"(?P<value>{_QUOTED})"
)
# A name and its value as two fields: Kubernetes `env`, ECS, CloudFormation parameters.
_NAME_VALUE_FIELDS = LazyPattern(
    r"(?i)\b(?:name|key|parameter_?key)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<key>[A-Za-z_][\w.-]{0,80})[\"']?"
    r"[ \t]*(?:,|;|\n)[ \t\n]*(?:-[ \t]*)?[\"']?(?:value|parameter_?value)[\"']?[ \t]*[:=][ \t]*"
    rf"(?P<value>{_QUOTED}|[^\s\"',;}}]{_BARE})"
)
# A code-style name and its value after a space: `set -gx DB_PASSWORD …`, `aws configure set
# aws_secret_access_key …`. Only names with `_` or `.`: in prose a word and the next are not this.
_NAME_SPACE_VALUE = LazyPattern(
    r"(?<![\w.$-])(?P<key>[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+)[ \t]+"
    rf"(?P<value>{_QUOTED}|[^\s\"'`]{_BARE})"
)
_MAKE_ASSIGNMENTS = ("?=", ":=", "::=", "+=")
_WORD_BEFORE = LazyPattern(r"([A-Za-z]+)[ \t]+$")
WORD_BEFORE_CHARS = 40  # how far back the word before a one-word name is looked for
_WORDS = LazyPattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_UNICODE_WORDS = LazyPattern(r"[^\W\d_]+|\d+")

PASSWORD_WORDS = (
    "password", "passwd", "passcode", "passwort", "kennwort", "contraseña", "contrasena", "wachtwoord",
    "senha", "hasło", "haslo", "heslo", "lösenord", "losenord", "passord", "adgangskode", "salasana",
    "şifre", "sifre", "jelszó", "jelszo", "пароль",
)  # fmt: skip
_SHORT_PASSWORD_WORDS = frozenset({"pass", "pwd", "pw", "psw"})
_PIN_WORDS = frozenset({"pin", "pincode"})
_SECRET_WORDS = ("secret", "token", "apikey", "credential", "credentials", "creds", "auth")
# Tokens that page, order or deduplicate requests (AWS NextToken, ClientToken) grant nothing.
_HARMLESS_TOKEN_WORDS = frozenset(
    {"next", "page", "continuation", "pagination", "idempotency", "client", "lock", "sync", "cursor",
     "resume", "marker", "change", "state", "csrf", "xsrf", "forward", "backward"}
)  # fmt: skip
# A pass that is a step or a ticket, not a password (first_pass, boarding pass).
_HARMLESS_PASS_WORDS = frozenset(
    {"first", "second", "third", "last", "final", "next", "single", "multi", "one", "two", "boarding",
     "day", "season", "free", "dry", "render", "shader", "lint", "compile", "build", "test", "hall"}
)  # fmt: skip
_TRAILING_WORDS = frozenset({"base", "value", "raw", "plain", "plaintext", "data"})
# A name ending in "key" is a credential only after one of these (API key, not sort key).
_KEY_QUALIFIERS = frozenset(
    {"api", "secret", "access", "private", "signing", "encryption", "master", "auth", "client", "service",
     "account", "license", "app", "admin", "deploy", "webhook", "storage", "subscription",
     "shared", "hmac", "jwt", "consumer", "x"}
)  # fmt: skip
# A name or sentence can give a credential only when the text holds one of these (lower case).
CREDENTIAL_WORDS = (
    "pass", "pwd", "pw", "psw", "secret", "token", "key", "auth", "cred", "pin", "login", "kennwort",
    "contrase", "wachtwoord", "senha", "hasło", "haslo", "heslo", "lösenord", "losenord", "adgangskode",
    "salasana", "şifre", "sifre", "jelsz", "пароль", "パスワード", "暗証番号", "密码", "密碼", "口令",
    "비밀번호", "암호",
)  # fmt: skip


def could_name_a_secret(text: str) -> bool:
    """Whether `text` holds a word a credential's name or sentence is made of (a cheap first test)."""
    return mentions(text.lower(), CREDENTIAL_WORDS)


def assigned_secret(text: str) -> str | None:
    """The label for the first name = value in `text` that gives a credential, or None."""
    could_name = could_name_a_secret  # cheap: most names hold no credential word at all
    for match in _ASSIGNMENT.pattern.finditer(text):
        if could_name(match["key"]) and (label := _assignment(text, match)):
            return label
    lowered = text.lower()
    for pattern in (_NAME_VALUE_FIELDS, _NAME_SPACE_VALUE):
        if pattern is _NAME_VALUE_FIELDS and "value" not in lowered:
            continue
        for match in pattern.pattern.finditer(text):
            if not could_name(match["key"]):
                continue
            kind = key_kind(match["key"], "")
            value = match["value"]
            quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`"
            env_style = pattern is _NAME_VALUE_FIELDS
            if kind and looks_like_secret(
                value[1:-1] if quoted else value, kind, quoted=quoted, env_style=env_style
            ):
                return _label(kind, match["key"])
    return None


def _assignment(text: str, match: re.Match[str]) -> str | None:
    key, value, sep, rest = match["key"], match["value"] or "", match["sep"], match["rest"]
    start = match.start()
    if sep == ":" and text[start - 1 : start] == ":":
        return None  # a field of a colon-separated name (arn:aws:secretsmanager:…:secret:name)
    kind = key_kind(key, text[max(0, start - WORD_BEFORE_CHARS) : start])
    if kind is None:
        return None
    if sep == ":" and (typed := _TYPE_THEN_LITERAL.pattern.match(text, match.end())):
        real = looks_like_secret(typed["value"][1:-1], kind, quoted=True, env_style=True)
        return _label(kind, key) if real else None
    after = match.end() + len(value) + len(rest) + 1
    if value in ("|", ">", "|-", ">-") and not rest.strip():  # a YAML block: the next line
        words = text[after:].split("\n", 1)[0].split()
        value = words[0] if words else ""
    elif not value and sep == ":" and not rest.strip():  # `password:` and the value indented below
        following = text[after:].split("\n", 1)[0]
        if following[:1] in (" ", "\t") and len(following.split()) == 1 and ":" not in following:
            value = following.strip()
    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`"
    if sep == "," and not (match["kq"] and quoted and not value[1:-1].isalpha()):
        return None  # only `define('DB_PASSWORD', 's3cret')`: not every argument list
    glued = sep == "=" and not match["kq"] and match.group(0)[len(key)] != " "
    env_style = glued or sep in _MAKE_ASSIGNMENTS
    if quoted:
        value = value[1:-1]
    elif rest.strip() and value.isalpha():
        return None  # `password: stored in the vault`: prose, not a value
    if looks_like_secret(value, kind, quoted=quoted, env_style=env_style):
        return _label(kind, key)
    return None


def _label(kind: str, key: str) -> str:
    noun = {PASSWORD: "a password", PASSPHRASE: "a password", PIN: "a PIN"}.get(kind, "a secret or token")
    return f"{noun} (the value of {key})"


def key_kind(key: str, before: str) -> str | None:
    """PASSWORD, PASSPHRASE, PIN or TOKEN when the name says it holds one (by its last word)."""
    words_pattern = _WORDS if key.isascii() else _UNICODE_WORDS
    words = [word.lower() for word in words_pattern.pattern.findall(key)]
    if not words:
        return None
    if len(words) == 1:  # `API key: …`, `db password: …`: the word before belongs to the name
        previous = _WORD_BEFORE.pattern.search(before)
        if previous:
            words.insert(0, previous.group(1).lower())
    if len(words) > 1 and words[-1] in _TRAILING_WORDS:  # SECRET_KEY_BASE holds a secret key
        words.pop()
    last = words[-1].removesuffix("s") if len(words[-1]) > 4 else words[-1]
    if last.endswith("passphrase"):
        return PASSPHRASE
    if last.endswith(PASSWORD_WORDS):
        return PASSWORD
    if last in _SHORT_PASSWORD_WORDS:
        return None if len(words) > 1 and words[-2] in _HARMLESS_PASS_WORDS else PASSWORD
    if last in _PIN_WORDS:
        return PIN
    if last == "token" and len(words) > 1 and words[-2] in _HARMLESS_TOKEN_WORDS:
        return None
    if last.endswith(_SECRET_WORDS) or (last == "key" and _KEY_QUALIFIERS.intersection(words[:-1])):
        return TOKEN
    return None
