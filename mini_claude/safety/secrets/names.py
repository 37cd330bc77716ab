"""Credentials given to a name: `DB_PASSWORD=…`, `password: …` (or on the next line), `"api_key": "…"`,
`--password …`, `apiKey: string = '…'`, `define('DB_PASSWORD', '…')`, `<password>…</password>`,
`Authorization: Bearer …`, `- name: DB_PASSWORD` + `value: …`, `set -gx DB_PASSWORD …`, and sentences:
`the password is …`, `password for the VPN: …`, `use the password … for`, `login: admin / …`,
`パスワードは …`. The name's last word says what it holds (key_kind); values.py says whether the value
is a real one, the more strictly the less it is written as a value (a word after a word)."""

from __future__ import annotations

import re

from mini_claude.safety.secrets.providers import compiled
from mini_claude.safety.secrets.values import PASSWORD, TOKEN, is_strong, looks_like_secret

# What is read of a value and of the rest of its line: each pattern's work at a position stays
# bounded, so a long line of `key: key: key: …` costs its length, not its length squared.
MAX_VALUE_CHARS = 512
MAX_REST_CHARS = 256
QUOTED = (
    rf"\"[^\"\n]{{0,{MAX_VALUE_CHARS}}}\"|'[^'\n]{{0,{MAX_VALUE_CHARS}}}'|`[^`\n]{{0,{MAX_VALUE_CHARS}}}`"
)
# A name (a `--flag` too; in quotes, markdown's `code` or *emphasis*), what it is for (`password for
# the VPN:`), then how the value is given: `=`, `:`, Make's `?=` `:=` `+=`, `=>`, a table's `|`, an
# argument list's `,`, XML's `>`, `is`, or a space. The value in a lookahead, so that one holding the
# next name (`setup: DB_PASSWORD=…`) is read too.
_NAMED = (
    r"(?<![\w.$-])(?P<key>(?:--)?[^\W\d][\w.-]{0,80})(?P<kq>[\"'`*>]?)"  # closed: "name", `name`, <name>
    r"(?P<for>[ \t]+(?i:for|of|on)[ \t]+(?:[^\s:=]+[ \t]+){0,4}?[^\s:=]+(?=[ \t]*[:=]|[ \t]+is\b))?"
    r"[ \t]*(?P<sep>\?=|::?=|\+=|=>|=|:(?![:/])|\||,|(?<=>)"
    r"|(?<=[ \t])(?:is|was|will[ \t]+be|should[ \t]+be|to|ist|lautet|est|es|é)\b:?|(?<=[ \t]))[ \t]*"
    r"(?P<scheme>(?i:bearer|basic|token|digest)[ \t]+)?"  # Authorization: Bearer …
    rf"(?=(?P<value>{QUOTED}|[^\s\"'`,;<]{{1,{MAX_VALUE_CHARS}}})?(?P<rest>[^\n]{{0,{MAX_REST_CHARS}}}))"
)
_TYPE_THEN_LITERAL = rf"&?(?:'static[ \t]+)?[A-Za-z_][\w.\[\]<>|, ]{{0,40}}?[ \t]*=[ \t]*(?P<value>{QUOTED})"
# A name and its value as two fields: Kubernetes `env`, ECS, CloudFormation.
_NAME_VALUE_FIELDS = (
    r"(?i)\b(?:name|key|parameter_?key)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<key>[A-Za-z_][\w.-]{0,80})[\"']?"
    r"[ \t]*(?:,|;|\n)[ \t\n]*(?:-[ \t]*)?[\"']?(?:value|parameter_?value)[\"']?[ \t]*[:=][ \t]*"
    rf"(?P<value>{QUOTED}|[^\s\"',;}}]{{1,{MAX_VALUE_CHARS}}})"
)
_LOGIN_PAIR = r"(?i)\b(?:login|credentials?|creds)\s*(?:is|:|=)\s*[\w.@+-]+\s*/\s*(?P<value>[^\s\"'`]+)"
# Password words of languages that put a particle after them, not a space or a colon.
_PARTICLE_LANGUAGES = ("パスワード", "暗証番号", "密码", "密碼", "口令", "비밀번호", "암호")
_PASSWORD_PARTICLE = (
    rf"(?i)(?P<key>{'|'.join(_PARTICLE_LANGUAGES)}|mot de passe)"
    r"\s*(?:(?:は|が|是|为|為|는|은|이|가|est)\s*)?[:=]?\s*(?P<value>[!-~]+)"
)
_TICKET = r"[A-Z][A-Z0-9]*-\d+"  # `make it pass CI-1234`: a ticket, not a password
_WORDS = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+"  # DB_PASSWORD, dbPassword, db.password: db, password

_OTHER_LANGUAGES = (
    "passwort", "kennwort", "contraseña", "contrasena", "wachtwoord", "senha", "hasło", "haslo", "heslo",
    "lösenord", "losenord", "passord", "adgangskode", "salasana", "şifre", "sifre", "jelszó", "jelszo",
    "пароль",
)  # fmt: skip
PASSWORD_WORDS = ("password", "passwd", "passcode", "passphrase", *_OTHER_LANGUAGES)
_SHORT_PASSWORD_WORDS = ("pass", "pwd", "pw", "psw")
_SECRET_WORDS = ("secret", "token", "apikey", "credential", "credentials", "creds", "auth", "authorization")
# Tokens that page, order or deduplicate requests (AWS NextToken, ClientToken) grant nothing.
_HARMLESS_TOKEN = (
    "next", "page", "continuation", "pagination", "idempotency", "client", "lock", "sync", "cursor", "resume",
    "marker", "change", "state", "csrf", "xsrf", "forward", "backward",
)  # fmt: skip
# A pass that is a step or a ticket, not a password (first_pass, boarding pass).
_HARMLESS_PASS = (
    "first", "second", "third", "last", "final", "next", "single", "multi", "one", "two", "boarding", "day",
    "season", "free", "dry", "render", "shader", "lint", "compile", "build", "test", "hall",
)  # fmt: skip
_TRAILING_WORDS = ("base", "value", "raw", "plain", "plaintext", "data")  # SECRET_KEY_BASE holds a key
# A name ending in "key" is a credential only after one of these (API key, not sort key).
_KEY_QUALIFIERS = (
    "api", "secret", "access", "private", "signing", "encryption", "master", "auth", "client", "service",
    "account", "license", "app", "admin", "deploy", "webhook", "storage", "subscription", "shared", "hmac",
    "jwt", "consumer", "x",
)  # fmt: skip
# A name or sentence can give a credential only when the text holds one of these (lower case).
CREDENTIAL_WORDS = (
    "pass", "pw", "psw", "secret", "token", "key", "auth", "cred", "login", "kennwort", "contrase",
    "wachtwoord", "senha", "hasło", "haslo", "heslo", "lösenord", "losenord", "adgangskode", "salasana",
    "şifre", "sifre", "jelsz", "пароль", *_PARTICLE_LANGUAGES,
)  # fmt: skip


def named_secret(text: str) -> str | None:
    """The label for the first credential given to a name in `text`, or None."""
    lowered = text.lower()
    for start in _names_with_a_credential_word(text, lowered):
        if (match := compiled(_NAMED).match(text, start)) and (label := _named(text, match)):
            return label
    for match in compiled(_NAME_VALUE_FIELDS).finditer(text) if "value" in lowered else ():
        value = unquoted(match["value"])[0]
        if (kind := key_kind(match["key"])) and looks_like_secret(value, kind, lenient=True):
            return label_for(kind, match["key"])
    for match in compiled(_LOGIN_PAIR).finditer(text) if "login" in lowered or "cred" in lowered else ():
        if _strong(unquoted(match["value"])[0]):
            return "a password (written as 'login: user / password')"
    particles = not text.isascii() or "mot de" in lowered
    for match in compiled(_PASSWORD_PARTICLE).finditer(text) if particles else ():
        value = unquoted(match["value"])[0]
        if not value.isalpha() and looks_like_secret(value, PASSWORD, lenient=False):
            return label_for(PASSWORD, match["key"])
    return None


def unquoted(value: str) -> tuple[str, bool]:
    """A value without its quotes, or without the punctuation ending a sentence; and whether quoted."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1], True
    return value.rstrip(".,;:!?)]}"), False


def label_for(kind: str, key: str) -> str:
    return f"{'a password' if kind == PASSWORD else 'a secret or token'} (the value of {key.lstrip('-')})"


def key_kind(key: str) -> str | None:
    """PASSWORD or TOKEN when the name says it holds one (by its last word), else None."""
    words = [word.lower() for word in re.findall(_WORDS if key.isascii() else r"[^\W\d_]+|\d+", key)]
    if len(words) > 1 and words[-1] in _TRAILING_WORDS:
        words.pop()
    if not words:
        return None
    last = words[-1].removesuffix("s") if len(words[-1]) > 4 else words[-1]
    qualifier = words[-2] if len(words) > 1 else ""
    if last.endswith(PASSWORD_WORDS) or (last in _SHORT_PASSWORD_WORDS and qualifier not in _HARMLESS_PASS):
        return PASSWORD
    if last == "token" and qualifier in _HARMLESS_TOKEN:
        return None
    if last.endswith(_SECRET_WORDS) or (last == "key" and any(w in _KEY_QUALIFIERS for w in words[:-1])):
        return TOKEN
    return None


def _names_with_a_credential_word(text: str, lowered: str) -> list[int]:
    """Where each name holding a credential word starts: only those are read (a pattern tried at
    every word of a long text costs many times a substring search for each credential word)."""
    if len(lowered) != len(text):  # a letter whose lower case is longer (`İ`): keep the positions
        lowered = "".join(char.lower()[0] for char in text)
    starts = set()
    for word in CREDENTIAL_WORDS:
        at = lowered.find(word)
        while at != -1:
            start = at
            while start > max(0, at - 90) and (text[start - 1].isalnum() or text[start - 1] in "_.$-"):
                start -= 1
            starts.add(start)
            at = lowered.find(word, at + 1)
    return sorted(starts)


def _named(text: str, match: re.Match[str]) -> str | None:
    key, value, sep, rest = match["key"], match["value"] or "", match["sep"], match["rest"]
    kind = key_kind(key)
    before = re.search(r"[A-Za-z]+[ \t]+$", text[max(0, match.start() - 40) : match.start()])
    if kind is None and before and len(re.findall(_WORDS, key)) == 1:  # `API key: …`: a two-word name
        key = before[0] + key
        kind = key_kind(key)
    if kind is None or (sep == ":" and text[match.start() - 1 : match.start()] == ":"):  # arn:…:secret:x
        return None
    if sep == ":" and (typed := compiled(_TYPE_THEN_LITERAL).match(text, match.end())):
        real = looks_like_secret(typed["value"][1:-1], kind, lenient=True)
        return label_for(kind, key) if real else None  # `DB_PASSWORD: str = "…"`
    if sep == ":" and value in ("", "|", ">", "|-", ">-") and not rest.strip():  # YAML: the next line
        following = text[match.end() + len(value) + len(rest) + 1 :].split("\n", 1)[0]
        if following[:1] in (" ", "\t") and len(following.split()) == 1 and ":" not in following:
            value = following.strip()
    value, quoted = unquoted(value)
    if quoted:  # `"Authorization": "Bearer …"`
        value = re.sub(r"(?i)^(?:bearer|basic|token|digest)[ \t]+", "", value)
    if sep == "," and not (match["kq"] and quoted and not value.isalpha()):
        return None  # only `define('DB_PASSWORD', 's3cret')`: not every argument list
    if not quoted and value.isalpha() and (rest.strip() or sep not in ("=", ":", "|")):
        return None  # `password: stored in the vault`, `the password is long`: prose, not a value
    if not sep.strip() and not match["scheme"] and match["kq"] != ">":  # a word after a word
        return label_for(kind, key) if _strong(value) else None  # `use the password Tr0ub4dor&3x`
    glued = sep == "=" and not match["kq"] and match[0][len(match["key"])] != " "  # NAME=value, as in .env
    lenient = quoted or glued or sep in ("?=", ":=", "::=", "+=")  # Make's `?=`: as in an env file
    return label_for(kind, key) if looks_like_secret(value, kind, lenient=lenient) else None


def _strong(value: str) -> bool:
    """A password after a word, with nothing between, must look chosen to be hard to guess."""
    real = looks_like_secret(value, PASSWORD, lenient=False) and is_strong(value)
    return real and not re.fullmatch(_TICKET, value)
