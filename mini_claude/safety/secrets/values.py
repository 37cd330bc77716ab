"""Whether a value written next to a credential's name is a real one, or a placeholder (`<token>`,
`${VAR}`, `***`, `changeme`), a reference to where one is kept (`os.environ[…]`, `DB_PASSWORD`,
`/run/secrets/db`, `kv/data/ci/npm`, `1Password`), a name of words (`prod-db-credentials-v3`) or a
word: detect-secrets' false-positive filters."""

from __future__ import annotations

import math
import re
from collections import Counter

PASSWORD, TOKEN = "password", "token"
MIN_PASSWORD_CHARS = 6
MIN_DIGITS_PASSWORD_CHARS = 8  # a password of digits only: shorter ones are counts, ports, years
MIN_TOKEN_CHARS = 12
MIN_WORDS_SECRET_CHARS = 16  # a secret of letters only: `JWT_SECRET=correcthorsebatterystaple`
RANDOM_TOKEN_CHARS = 20  # a token this long without a digit counts if its characters look random
RANDOM_ENTROPY_BITS = 3.5  # per character, as gitleaks' generic rule

_PLACEHOLDER_WORDS = (
    "none", "null", "nil", "true", "false", "yes", "no", "required", "optional", "empty", "hidden",
    "redacted", "removed", "changeme", "secret", "password", "passwd", "token", "example", "placeholder",
    "todo", "tbd", "n/a", "na", "unset", "undefined", "default", "string", "str", "int", "bool", "any",
    "blank", "masked", "sensitive", "encrypted", "xxx", "test", "dummy", "fake", "sample",
    # where secrets are kept: `password: 1Password`
    "1password", "bitwarden", "lastpass", "keepass", "keepassxc", "dashlane", "vault", "keychain", "keyring",
    "doppler", "infisical",
)  # fmt: skip
# Words placeholders are made of (`your-api-key-here`), and those saying where a value is (`from-env`).
_FILLER_WORDS = (
    *_PLACEHOLDER_WORDS, "here", "your", "my", "api", "key", "change", "me", "the", "value", "see", "ask",
    "in", "from", "use", "via", "env", "file",
)  # fmt: skip
_PLACEHOLDER_MARKS = ("...", "…", "{{", "}}", "${", "***", "os.environ", "getenv", "process.env")
# A value opened or closed by a bracket, or a name called or indexed, is a placeholder or a
# reference (`<token>`, `[REDACTED]`, `(hidden)`, `form.cleaned_data['password']`, `getpass()`);
# a bracket inside is a generated key's symbol (Django's `…y5u(o0i)e-n…`).
_BRACKETED = r"^[(\[<]|[)\]>]$|^[A-Za-z_][\w.]*[(\[]"
_PLACEHOLDER = (
    r"(?i)^[$%&{*@:-]|^(?:your|my|the|some|insert|replace|enter|put)[_-]|x{4,}|^(.)\1*$"
    r"|^v?\d+(?:\.\d+)+$"  # a version
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # settings.SECRET_KEY, self.token: a reference
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"  # DB_PASSWORD: the name of a variable
    r"|^(?:/|~/|\./|\.\./|[a-z][a-z0-9+.-]*:/|arn:)"  # a path, a URL, an AWS resource name
    r"|^(?:env|file|vault|ssm|op|keychain|keyring|secretsmanager):"  # a secret store's reference
    r"|^[a-z]+(?:_[a-z]+)+$"  # downscoped_credentials: an identifier
    r"|^[A-Za-z_][\w.-]*=[^=]"  # kid=2024-11: another name given a value, read on its own
    # kv/data/ci/npm-2024, vault:secret/prod#token: a relative path, in lower case as paths are
    r"|(?-i:^(?:[a-z][a-z0-9+.-]*:)?[a-z0-9][a-z0-9_.-]*(?:/[a-z0-9_.#-]+)+/?$)"
)
# Words that make a name of words say where or what a secret is (prod-db-credentials-v3).
_REFERENCE_WORDS = (
    "prod", "production", "staging", "stage", "dev", "test", "qa", "uat", "db", "database", "secret",
    "secrets", "password", "passwords", "pw", "creds", "credential", "credentials", "key", "keys", "token",
    "tokens", "api", "ci", "cd", "deploy", "deployer", "vault", "kv", "item", "name", "rotated", "old", "new",
    "current", "backup", "primary", "app", "service", "svc", "user", "admin", "aws", "gcp", "azure", "k8s",
    "npm", "github", "gitlab", "docker", "ssh", "tls", "ssl", "jwt", "oauth", "auth", "pkce", "rs256",
    "hs256", "es256", "bcrypt", "argon2", "argon2id", "scrypt", "hashed", "hash", "client", "post", "basic",
    "bearer", "sso", "saml", "oidc", "ldap", "tenant", "env", "config",
)  # fmt: skip


def looks_like_secret(value: str, kind: str, *, lenient: bool) -> bool:
    """Whether `value`, given to a name of `kind` (PASSWORD or TOKEN), is a real credential.
    `lenient`: it was quoted or given as in an env file, where even a weak password is one
    (`DB_PASSWORD=admin-2024`); else a value of words is a type, a scheme or a name."""
    if is_placeholder(value) or (not (lenient and kind == PASSWORD) and is_name_of_words(value)):
        return False
    has_digit = any(char.isdigit() for char in value)
    has_letter = any(char.isalpha() for char in value)
    if kind == PASSWORD:
        if len(value) < MIN_PASSWORD_CHARS or (not has_letter and len(value) < MIN_DIGITS_PASSWORD_CHARS):
            return False
        # `password: bcrypt-hashed` is a scheme; `password: correcthorsebattery` run together is not
        words_only = value.replace("-", "").replace("_", "").isalpha()
        run_together = value.isalpha() and value.islower() and len(value) >= MIN_WORDS_SECRET_CHARS
        return lenient or not words_only or run_together
    if len(value) < MIN_TOKEN_CHARS or " " in value:
        return False
    if has_digit and has_letter:
        return lenient or not is_words_and_a_number(value)
    if lenient and value.isalpha():
        return len(value) >= MIN_WORDS_SECRET_CHARS
    return len(value) >= RANDOM_TOKEN_CHARS and entropy(value) >= RANDOM_ENTROPY_BITS


def is_strong(value: str) -> bool:
    """A password written right after a word (`use the password X for`) must look chosen to be
    hard to guess: three of lower case, upper case, digits and symbols, or two from 8 characters."""
    if not value.isascii() or len(value) < MIN_PASSWORD_CHARS:
        return False
    kinds = (str.islower, str.isupper, str.isdigit, lambda char: not char.isalnum())
    classes = sum(any(test(char) for char in value) for test in kinds)
    return classes >= 3 or (classes == 2 and len(value) >= MIN_DIGITS_PASSWORD_CHARS and not value.isalpha())


def is_placeholder(value: str) -> bool:
    if not value or value.lower() in _PLACEHOLDER_WORDS or re.search(_PLACEHOLDER, value):
        return True
    words = re.findall(r"[A-Za-z]+|\d+", value.lower().replace("1password", "vault"))
    if re.search(_BRACKETED, value):
        return True
    return all(word in _FILLER_WORDS for word in words) or any(mark in value for mark in _PLACEHOLDER_MARKS)


def is_name_of_words(value: str) -> bool:
    """`prod-db-credentials-v3`: words and short numbers joined by `-`, `_`, `.` or `:`, one of
    them a word saying where or what a secret is."""
    parts = re.split(r"[-_.:]", value.lower())
    if len(parts) < 2 or not all(re.fullmatch(r"[a-z]{2,}\d{0,3}|k8s|v?\d{1,4}", part) for part in parts):
        return False
    return any(part.rstrip("0123456789") in _REFERENCE_WORDS or part in _REFERENCE_WORDS for part in parts)


def is_words_and_a_number(value: str) -> bool:
    """`opaque2024format`, `refresh_worker2`: at most three runs, whole words (three letters or
    more, with a vowel) and short numbers joined by `-`, `_` or `.`: named, not generated."""
    runs = re.findall(r"[A-Za-z]+|\d+|[^A-Za-z\d]+", value)
    return len(runs) <= 3 and all(
        (run.isdigit() and len(run) <= 4)
        or (run.isalpha() and len(run) >= 3 and re.search("[aeiouyAEIOUY]", run) is not None)
        or run in ("-", "_", ".")
        for run in runs
    )


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: a generated token's is high, a word's low."""
    return -sum(n / len(value) * math.log2(n / len(value)) for n in Counter(value).values())
