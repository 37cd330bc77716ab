"""Recognising credentials in text, so the model cannot file them away in a memory (and a draft
that holds one is not sent for recall while the user types).

`find_secret(text)` is the one entry point: the label of the first rule that matches, or None.
The rules are the ideas of maintained scanners (gitleaks' rule set, detect-secrets' plugins and
its false-positive filters), measured on tests/adversarial/secret_corpus.py. The text is first
read as it would be shown (secret_text: escapes, invisible characters, look-alike letters,
markdown and HTML escapes undone); then, in this order:

1. provider tokens by their documented prefix and shape, private keys by their header or by their
   encoded body (secret_providers);
2. credentials in their own syntax (below): passwords in URLs, `Authorization` headers, `curl -u`,
   `--password`-style flags, the short flags of tools that take a password (`mysql -p…`,
   `sshpass -p`, `docker login -p`, `redis-cli -a`, `mongo -p`, `smbclient -U user%…`, `openssl
   -passin pass:…`, `ConvertTo-SecureString '…' -AsPlainText`), SQL (`WITH PASSWORD '…'`,
   `IDENTIFIED BY …`), a URL's `?key=` / `sig=`, `.netrc` and `.pgpass` lines, XML elements,
   htpasswd / shadow lines;
3. a name given a value (secret_names: `DB_PASSWORD=…`, `"api_key": "…"`, typed declarations,
   Kubernetes `name`/`value` pairs, `set -gx DB_PASSWORD …`) and sentences (secret_prose: `the
   secret is …`, `use the password … for`, `login: admin / …`, other languages' password words).

For 2 and 3 the value must look real (secret_values): not a placeholder and not a reference to
where the secret is kept (a path, a vault path, a variable's or a secret's name).
"""

from __future__ import annotations

from mini_claude.safety.secrets.names import MAX_VALUE_CHARS, assigned_secret, could_name_a_secret
from mini_claude.safety.secrets.prose import prose_secret
from mini_claude.safety.secrets.providers import LazyPattern, provider_token
from mini_claude.safety.secrets.text import mentions, variants
from mini_claude.safety.secrets.values import PASSWORD, TOKEN, looks_like_secret

_QUOTED_OR_BARE = rf"(?P<value>'[^'\n]{{1,{MAX_VALUE_CHARS}}}'|\"[^\"\n]{{1,{MAX_VALUE_CHARS}}}\"|[^\s'\"]+)"
_URL_PASSWORD = LazyPattern(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]*:(?P<value>[^\s/?#@\"'<>]+)@")
_AUTH_HEADER = LazyPattern(
    r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|apikey)\s+"
    r"(?P<value>[A-Za-z0-9._~+/=-]{8,})"
)
_CURL_USER = LazyPattern(r"(?:^|\s)(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<value>[^\s\"']+)")
_CLI_FLAG = LazyPattern(
    r"(?i)(?:^|\s)--(?:[\w-]*[-_])?(?:password|passwd|pass|pwd|token|api-?key|secret|client-secret"
    rf"|auth-token|access-key|secret-key)(?:=|[ \t]+){_QUOTED_OR_BARE}"
)
MAX_ARGS_CHARS = 300  # how far along one command a password flag is looked for
_ALONG = rf"[^\n|;&]{{0,{MAX_ARGS_CHARS}}}?"  # along one command (bounded: no line is read twice over)
_TOOL_ARGS = rf"\b{_ALONG}[ \t]"  # the rest of one command, up to a flag
# (pattern, words one of which the text must hold, lower-cased)
_SHORT_FLAGS = tuple(
    (LazyPattern(source), words)
    for source, words in (
        (
            rf"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb[\w-]*){_TOOL_ARGS}"
            rf"-p{_QUOTED_OR_BARE}",
            ("mysql", "mariadb"),
        ),
        (rf"\bsshpass{_TOOL_ARGS}-p[ \t]*{_QUOTED_OR_BARE}", ("sshpass",)),
        (
            rf"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)\b{_ALONG}\blogin{_TOOL_ARGS}"
            rf"-p[ \t]*{_QUOTED_OR_BARE}",
            ("login",),
        ),
        (rf"\bredis-cli{_TOOL_ARGS}-a[ \t]+{_QUOTED_OR_BARE}", ("redis-cli",)),
        (
            rf"\bmongo(?:sh|dump|restore|export|import|stat|top)?{_TOOL_ARGS}-p[ \t]+{_QUOTED_OR_BARE}",
            ("mongo",),
        ),
        (r"-pass(?:in|out)?[ \t]+pass:(?P<value>\S+)", ("pass:",)),
        (
            rf"(?i)\bConvertTo-SecureString{_TOOL_ARGS}(?P<value>'[^'\n]{{1,{MAX_VALUE_CHARS}}}'"
            rf"|\"[^\"\n]{{1,{MAX_VALUE_CHARS}}}\"){_ALONG}-AsPlainText",
            ("convertto-securestring",),
        ),
        (
            rf"\b(?:smbclient|rpcclient|smbmap|netexec|crackmapexec){_TOOL_ARGS}-U[ \t]*[\"']?[^\s%\"']+"
            r"%(?P<value>[^\s\"']+)",
            ("smbclient", "rpcclient", "smbmap", "netexec", "crackmapexec"),
        ),
    )
)
_SQL_PASSWORD = LazyPattern(
    r"(?i)\b(?:with\s+(?:encrypted\s+|unencrypted\s+)?password\b|identified\s+(?:with\s+\S+\s+)?by\b"
    r"|set\s+password\b(?:\s+for\s+\S+)?)\s*=?\s*(?:password\s*\(\s*)?"
    r"(?P<value>'[^'\n]{0,512}'|\"[^\"\n]{0,512}\"|[^\s;,)]{1,512})"
)
# A credential as a URL parameter whose name says nothing by itself: Google's `?key=`, Azure's `sig=`.
_URL_QUERY_KEY = LazyPattern(
    r"(?i)[?&;](?:key|sig|signature|x-amz-signature|x-goog-signature)=(?P<value>[^&\s#\"'<>]+)"
)
_NETRC = LazyPattern(r"(?is)\bmachine\s+\S+.{0,200}?\bpassword\s+(?P<value>\S+)")
# From the colon after the host (a literal start, so the engine skips to colons), to the line's end.
_PGPASS = LazyPattern(r"(?m):(?<=[^\s:#]:)(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:(?P<value>[^\s:]+)$")
_XML_ELEMENT = LazyPattern(
    r"(?i)<(?P<tag>(?:\w+[_-])?(?:password|passwd|secret|token|api[_-]?key|client[_-]?secret))>"
    r"(?P<value>[^<\s]+)</(?P=tag)>"
)
_PASSWORD_HASH = LazyPattern(
    r"(?m)^[\w.@-]+:\$(?:apr1|[1256]|2[abxy]|y|gy|7|sha1|pbkdf2[\w-]*)\$[^\s:$]+\$[./A-Za-z0-9+=]{16,}"
)

# (label, pattern, what kind of value its `value` group must look like (None: the match is
# enough), words one of which the lower-cased text must hold for the pattern to be tried at all)
# An unquoted value counts as in an env file (`-u admin:hunter`), but in SQL, which reads as prose
# (`identified by email`), it must not be a word.
_SQL = "sql password"
_COMMAND_LINE = "a password on a command line (mysql -p…, sshpass -p, redis-cli -a …)"
_VALUE_RULES: tuple[tuple[str, LazyPattern, str | None, tuple[str, ...]], ...] = (
    ("a password inside a URL (scheme://user:password@host)", _URL_PASSWORD, PASSWORD, ("://",)),
    ("an Authorization header with credentials", _AUTH_HEADER, PASSWORD, ("authorization",)),
    ("a password on a command line (-u user:password)", _CURL_USER, PASSWORD, ("-u", "--user")),
    ("a password or token on a command line (--password …)", _CLI_FLAG, PASSWORD, ("--",)),
    *((_COMMAND_LINE, pattern, PASSWORD, words) for pattern, words in _SHORT_FLAGS),
    (
        "a password in SQL (WITH PASSWORD '…', IDENTIFIED BY …)",
        _SQL_PASSWORD,
        _SQL,
        ("password", "identified"),
    ),
    ("a key or signature in a URL (?key=…, sig=…)", _URL_QUERY_KEY, TOKEN, ("key=", "sig=", "signature=")),
    ("a password in .netrc form (machine … password …)", _NETRC, PASSWORD, ("machine",)),
    ("a password in a .pgpass line (host:port:db:user:password)", _PGPASS, PASSWORD, (":",)),
    ("a password or token in XML (<password>…</password>)", _XML_ELEMENT, PASSWORD, ("</",)),
    ("a password hash (an htpasswd or shadow line)", _PASSWORD_HASH, None, (":$",)),
)


def find_secret(text: str) -> str | None:
    """What kind of credential `text` seems to contain (a label naming the rule), or None."""
    for variant in variants(text):
        label = _rule_matched(variant)
        if label:
            return label
    return None


def _rule_matched(text: str) -> str | None:
    if label := provider_token(text):
        return label
    lowered = text.lower()
    for label, pattern, kind, words in _VALUE_RULES:
        if not mentions(lowered, words):
            continue
        for match in pattern.pattern.finditer(text):
            if kind is None or _real_value(match["value"], kind):
                return label
    if could_name_a_secret(text):
        return assigned_secret(text) or prose_secret(text)
    return None


def _real_value(value: str, kind: str) -> bool:
    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"
    env_style = not quoted and kind != _SQL
    kind = PASSWORD if kind == _SQL else kind
    return looks_like_secret(value[1:-1] if quoted else value, kind, quoted=quoted, env_style=env_style)
