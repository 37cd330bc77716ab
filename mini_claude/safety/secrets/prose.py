"""Credentials written in sentences: `the password is …`, `my aws secret is …`, `password for the
VPN: …`, `use the password … for`, `login is admin / …`, and the password words of other
languages (`Passwort: …`, `パスワードは … です`, `密码是 …`, `비밀번호는 …`)."""

from __future__ import annotations

import re

from mini_claude.safety.secrets.providers import LazyPattern
from mini_claude.safety.secrets.text import mentions
from mini_claude.safety.secrets.values import (
    PASSPHRASE,
    PASSWORD,
    PIN,
    TOKEN,
    is_name_of_words,
    is_placeholder,
    is_strong,
    looks_like_secret,
)

_KEY_WORDS = (
    r"(?P<key>password|passphrase|passwd|passcode|pw|pin|api[ _-]?key|secret[ _-]?key|access[ _-]?key"
    r"|private[ _-]?key|secret|credentials?|creds|(?:auth[ _-]?|access[ _-]?|api[ _-]?|bearer[ _-]?)?token)"
)
_VALUE = r"(?P<value>[\"'`]?[^\s\"'`]+)"
# `password for the VPN: …`, `the pin for the vault is …`; `the password is …`, `the token
# should be …`, `the secret = …` (one pattern: each is tried at every position of the text)
_PROSE_IS = LazyPattern(
    rf"(?i)\b{_KEY_WORDS}\s+(?:(?P<for>for|of|on)\s+(?:[^\s:=]+\s+){{0,4}}?[^\s:=]+\s*(?:[:=]|\s+is)"
    rf"|is|was|will\s+be|should\s+be|=|to)\s*:?\s*{_VALUE}"
)
# `use the password Tr0ub4dor&3x for …`, `with pass hunter22`, `/ pw Xk9mm2pq!`
_PROSE_BARE = LazyPattern(
    r"(?i)\b(?P<key>password|passwd|passphrase|passcode|pass|pw)[ \t]+"
    r"(?P<value>'[^'\n]{1,512}'|\"[^\"\n]{1,512}\"|[^\s\"'`]+)"
)
# `login is admin / …`, `VPN login: admin / …`, `creds = root/…`
_LOGIN_PAIR = LazyPattern(
    r"(?i)\b(?:login|credentials?|creds)\s*(?:is|:|=)\s*[\w.@+-]+\s*/\s*(?P<value>[^\s\"'`]+)"
)
# Password words of other languages, with their particles and copulas; a password is ASCII.
_FOREIGN = LazyPattern(
    r"(?i)(?P<key>パスワード|暗証番号|密码|密碼|口令|비밀번호|암호|пароль|passwort|kennwort|contrase[ñn]a"
    r"|mot de passe|senha|wachtwoord|has[łl]o|heslo|l[öo]senord|passord|adgangskode|salasana|[şs]ifre"
    r"|jelsz[óo])\s*(?:(?:は|が|是|为|為|는|은|이|가|ist|lautet|est|es|é|is)\s*)?[:=]?\s*(?P<value>[!-~]+)"
)
_KEY_TRIGGERS = ("pass", "pw", "pin", "key", "secret", "cred", "token")
_FOREIGN_TRIGGERS = (
    "パスワード", "暗証番号", "密码", "密碼", "口令", "비밀번호", "암호", "пароль", "passwort", "kennwort",
    "contrase", "mot de passe", "senha", "wachtwoord", "hasło", "haslo", "heslo", "lösenord", "losenord",
    "passord", "adgangskode", "salasana", "şifre", "sifre", "jelsz",
)  # fmt: skip
_TICKET = re.compile(r"[A-Z][A-Z0-9]*-\d+")  # `make it pass CI-1234`: a ticket, not a password


def prose_secret(text: str) -> str | None:
    """The label for the first credential written in a sentence in `text`, or None."""
    lowered = text.lower()
    for match in _PROSE_IS.pattern.finditer(text) if mentions(lowered, _KEY_TRIGGERS) else ():
        key = match["key"].lower()
        kind = _kind(key)
        value = match["value"].strip("\"'`").rstrip(".,;:!?)") or ""
        if not value.isalpha() and looks_like_secret(value, kind, quoted=False, env_style=False):
            form = f"'the {key} for …: …'" if match["for"] else f"'the {key} is …'"
            return f"{_noun(kind)} (written as {form})"
    for match in _PROSE_BARE.pattern.finditer(text) if mentions(lowered, ("pass", "pw")) else ():
        value = match["value"]
        value = value[1:-1] if value[0] in "\"'" else value.rstrip(".,;:!?)")
        if _strong_password(value):
            return f"a password (written after the word '{match['key'].lower()}')"
    for match in _LOGIN_PAIR.pattern.finditer(text) if mentions(lowered, ("login", "cred")) else ():
        if _strong_password(match["value"].rstrip(".,;:!?)")):
            return "a password (written as 'login: user / password')"
    for match in _FOREIGN.pattern.finditer(text) if mentions(lowered, _FOREIGN_TRIGGERS) else ():
        value = match["value"].rstrip(".,;:!?)")
        if not value.isalpha() and looks_like_secret(value, PASSWORD, quoted=False, env_style=False):
            return f"a password (written after '{match['key'].lower()}')"
    return None


def _strong_password(value: str) -> bool:
    if is_placeholder(value) or is_name_of_words(value) or _TICKET.fullmatch(value):
        return False
    return is_strong(value)


def _kind(key: str) -> str:
    if key.startswith("passphrase"):
        return PASSPHRASE
    if key.startswith(("pass", "pw")):
        return PASSWORD
    return PIN if key == "pin" else TOKEN


def _noun(kind: str) -> str:
    return {PASSWORD: "a password", PASSPHRASE: "a password", PIN: "a PIN"}.get(kind, "an API key or token")
