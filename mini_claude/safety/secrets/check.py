"""Recognising a credential saved by accident, so the model does not file one away in a memory (and
a draft holding one is not sent for recall while the user types). It is no defence against a model
hiding a secret on purpose: any filter of this kind loses to a token split in two.

`find_secret(text)` is the one entry point: the label of the first rule that matches, or None. The
rules, after gitleaks' and detect-secrets' and measured on tests/adversarial/secret_corpus.py: tokens
by their provider's shape and private keys (providers.py), credentials in a URL or a command line
(below), and a name given a real-looking value, in code or in a sentence (names.py)."""

from __future__ import annotations

import unicodedata

from mini_claude.safety.secrets.names import MAX_VALUE_CHARS, QUOTED, named_secret, unquoted
from mini_claude.safety.secrets.providers import compiled, provider_token
from mini_claude.safety.secrets.values import PASSWORD, TOKEN, looks_like_secret

# ECMA-48 escape sequences, 7- and 8-bit: CSI (colours: `\x1b[0m`), strings (OSC titles and
# links, DCS…) up to their terminator, and two-character escapes (`\x1b(B`): a terminal shows none.
_TERMINAL_ESCAPE = (
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\x1b[\x20-\x2f]*[\x30-\x7e]"
)
_MARKDOWN_ESCAPE = r"\\([!-/:-@\[-`{-~])"  # CommonMark: any ASCII punctuation may be escaped
# Markdown's other bold marker, `__bold__`: a `__` not between two word characters (`DB__PASSWORD`
# and `__init__` inside a name stay).
_UNDERSCORE_BOLD = r"(?<!\w)__|__(?!\w)"

_VALUE = rf"(?P<value>{QUOTED}|[^\s'\"`]+)"
_ALONG = r"[^\n|;&]{0,300}?"  # along one command (bounded: no line is read twice over)
_ARGS = rf"\b{_ALONG}[ \t]"  # the rest of one command, up to a flag
_URL_PASSWORD = r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]*:(?P<value>[^\s/?#@\"'<>]+)@"
_URL_KEY = r"(?i)[?&;](?:key|sig|signature|x-amz-signature|x-goog-signature)=(?P<value>[^&\s#\"'<>]+)"
_CURL_USER = r"(?:^|\s)(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<value>[^\s\"']+)"
_SHORT_FLAG = (  # tools taking a password by a short flag: `mysql -pSECRET`, `sshpass -p SECRET`…
    rf"(?:\b(?:mysql\w*|mariadb[\w-]*){_ARGS}-p|\bsshpass{_ARGS}-p[ \t]*|\bredis-cli{_ARGS}-a[ \t]+"
    rf"|\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)\b{_ALONG}\blogin{_ARGS}-p[ \t]*"
    rf"|\bmongo(?:sh|dump|restore|export|import|stat|top)?{_ARGS}-p[ \t]+|-pass(?:in|out)?[ \t]+pass:"
    rf"|\bsmbclient{_ARGS}-U[ \t]*[\"']?[^\s%\"']+%){_VALUE}"
)
_SECURE_STRING = rf"(?i)\bConvertTo-SecureString{_ARGS}(?P<value>{QUOTED}){_ALONG}-AsPlainText"
_SQL = rf"(?i)\bidentified\s+(?:with\s+\S+\s+)?by\s+(?P<value>{QUOTED}|[^\s;,)]{{1,{MAX_VALUE_CHARS}}})"
_COMMAND_LINE = "a password on a command line"
# (label, pattern, what its `value` must look like, words one of which the lower-cased text must
# hold for the pattern to be tried at all). Unquoted, a value counts as in an env file, but in SQL,
# which reads as prose (`identified by email`), not.
_RULES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("a password inside a URL (scheme://user:password@host)", _URL_PASSWORD, PASSWORD, ("://",)),
    ("a key or signature in a URL (?key=…, sig=…)", _URL_KEY, TOKEN, ("key=", "sig=", "signature=")),
    (f"{_COMMAND_LINE} (-u user:password)", _CURL_USER, PASSWORD, ("-u", "--user")),
    (
        f"{_COMMAND_LINE} (mysql -p…, sshpass -p, redis-cli -a …)",
        _SHORT_FLAG,
        PASSWORD,
        ("mysql", "mariadb", "sshpass", "redis-cli", "login", "mongo", "pass:", "smbclient"),
    ),
    (f"{_COMMAND_LINE} (ConvertTo-SecureString)", _SECURE_STRING, PASSWORD, ("convertto-securestring",)),
    ("a password in SQL (IDENTIFIED BY …)", _SQL, "sql", ("identified",)),
)


def find_secret(text: str) -> str | None:
    """What kind of credential `text` seems to contain (a label naming the rule), or None."""
    text = readable(text)
    if label := provider_token(text):
        return label
    lowered = text.lower()
    for label, source, kind, words in _RULES:
        if any(word in lowered for word in words):
            for match in compiled(source).finditer(text):
                value, quoted = unquoted(match["value"])
                lenient = quoted or kind != "sql"
                if looks_like_secret(value, PASSWORD if kind == "sql" else kind, lenient=lenient):
                    return label
    return named_secret(text)


def readable(text: str) -> str:
    """`text` as shown where it was copied from: terminal escape sequences dropped (a token printed
    in colour), markdown's backslash escapes and bold markers undone (`ghp\\_…` as HTML-to-markdown
    converters write it, `**Password:** …`, `__ghp_…__`), HTML entities decoded (`&lowbar;`, `&#95;`,
    `&quot;`) and compatibility forms folded (NFKC: the full-width `：` a Japanese input method types)."""
    text = text.replace("\r\n", "\n")
    if "\x1b" in text or not text.isascii():
        text = compiled(_TERMINAL_ESCAPE).sub("", text)
    if "\\" in text:
        text = compiled(_MARKDOWN_ESCAPE).sub(r"\1", text)
    if "&" in text:
        import html  # here: its table of entities is not worth loading for a text without one

        text = html.unescape(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.replace("**", "")
    return compiled(_UNDERSCORE_BOLD).sub("", text) if "__" in text else text
