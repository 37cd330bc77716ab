"""Whether the value found next to a credential's name is a real credential, or a placeholder, a
reference to where the credential is kept, a name, a type or a word (detect-secrets' filters).

A value is never a credential when it is:
- a placeholder: `<token>`, `${VAR}`, `$VAR`, `:'var'`, `{{ secrets.X }}`, `***`, `xxxx`, `None`,
  `changeme`, `your-api-key-here`, one character repeated, a version (`1.2.3`), a flag (`--x`);
- a reference to where the secret lives: a password manager by name (`1Password`, `vault`), code
  (`os.environ[…]`, `settings.KEY`, `self.token`), an environment variable's name (`DB_PASSWORD`),
  an identifier (`downscoped_credentials`), a path (`/run/secrets/db`, `~/.pgpass`,
  `prod/db-creds-2024`, `kv/data/ci/npm`: lower case, with a slash), a URL or an AWS ARN, or a
  name made of words and numbers that says what it is (`prod-db-credentials-v3`,
  `db-password-2024-rotated`, `jwt-rs256`), except as a password in quotes or an env file
  (`DB_PASSWORD=admin-2024` is a weak password, not a name).

Past that, each kind of name has its own bar:
- a password (`password`, `pass`, `pw`, `passphrase`…) of at least MIN_PASSWORD_CHARS
  (MIN_PIN_CHARS when only digits); written unquoted outside an env file it must not be one word
  or words joined by `-`/`_` (a type, a hashing scheme: `password: bcrypt-hashed`), except for a
  passphrase, which is made of words, and for words run together in lower case from
  MIN_WORDS_SECRET_CHARS on (`correcthorsebattery`);
- a PIN: MIN_PIN_DIGITS to MAX_PIN_DIGITS digits;
- a secret, token or key: at least MIN_TOKEN_CHARS without spaces, holding letters and digits or,
  from RANDOM_TOKEN_CHARS on, characters random enough (RANDOM_ENTROPY_BITS per character); a
  quoted or env-file value of letters only counts from MIN_WORDS_SECRET_CHARS
  (`JWT_SECRET=correcthorsebatterystaple`); an unquoted one made of two or three words and a
  number (`opaque2024format`) is a name, not a token.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from mini_claude.safety.secrets.providers import LazyPattern

PASSWORD, PASSPHRASE, PIN, TOKEN = "password", "passphrase", "pin", "token"
MIN_PASSWORD_CHARS = 6
MIN_PIN_CHARS = 8  # a password of digits only: shorter ones are counts, ports, years
MIN_PIN_DIGITS = 6
MAX_PIN_DIGITS = 12
MIN_TOKEN_CHARS = 12
MIN_WORDS_SECRET_CHARS = 16
RANDOM_TOKEN_CHARS = 20  # a token this long without a digit counts if its characters look random
RANDOM_ENTROPY_BITS = 3.5  # per character, as gitleaks' generic rule

_PLACEHOLDER_WORDS = frozenset(
    {"none", "null", "nil", "true", "false", "yes", "no", "required", "optional", "empty", "hidden",
     "redacted", "removed", "changeme", "secret", "password", "passwd", "token", "example", "placeholder",
     "todo", "tbd", "n/a", "na", "unset", "undefined", "default", "string", "str", "int", "bool", "any",
     "blank", "masked", "sensitive", "encrypted", "xxx", "test", "dummy", "fake", "sample",
     # where secrets are kept: `password: 1Password`
     "1password", "bitwarden", "lastpass", "keepass", "keepassxc", "dashlane", "vault", "keychain",
     "keyring", "doppler", "infisical"}
)  # fmt: skip
# Words that make up placeholder values such as EXAMPLE-PASSWORD or your-api-key-here.
_FILLER_WORDS = _PLACEHOLDER_WORDS | {"here", "your", "my", "api", "key", "change", "me", "the", "value"}
# ... and those that say where a value is kept instead (`see-1password`, `from-env`).
_FILLER_WORDS |= {"see", "ask", "in", "from", "use", "via", "env", "file"}
_PLACEHOLDER_MARKS = (
    "...", "…", "{{", "}}", "${", "<", ">", "(", "[", "***", "os.environ", "getenv", "process.env"
)  # fmt: skip
_PLACEHOLDER = LazyPattern(
    r"(?i)^[$%&{*@:-]|^(?:your|my|the|some|insert|replace|enter|put)[_-]|x{4,}|^(.)\1*$"
    r"|^v?\d+(?:\.\d+)+$"  # a version
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # settings.SECRET_KEY, self.token: a reference
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"  # DB_PASSWORD: the name of a variable
    r"|^(?:/|~/|\./|\.\./|[a-z][a-z0-9+.-]*:/|arn:)"  # a path, a URL, an AWS resource name
    r"|^(?:env|file|vault|ssm|op|keychain|keyring|secretsmanager):"  # a secret store's reference
    r"|^[a-z]+(?:_[a-z]+)+$"  # downscoped_credentials: an identifier
    # kv/data/ci/npm-2024, vault:secret/prod#token: a relative path, in lower case as paths are
    r"|(?-i:^(?:[a-z][a-z0-9+.-]*:)?[a-z0-9][a-z0-9_.-]*(?:/[a-z0-9_.#-]+)+/?$)"
)
_NAME_PART = LazyPattern(r"[a-z]{2,}\d{0,3}|k8s|v?\d{1,4}")
_NAME_SEPARATORS = LazyPattern(r"[-_.:]")
# Words that make a name of words say where or what a secret is (prod-db-credentials-v3).
_REFERENCE_WORDS = frozenset(
    {"prod", "production", "staging", "stage", "dev", "test", "qa", "uat", "db", "database", "secret",
     "secrets", "password", "passwords", "pw", "creds", "credential", "credentials", "key", "keys", "token",
     "tokens", "api", "ci", "cd", "deploy", "deployer", "vault", "kv", "item", "name", "rotated", "old",
     "new", "current", "backup", "primary", "app", "service", "svc", "user", "admin", "aws", "gcp",
     "azure", "k8s", "npm", "github", "gitlab", "docker", "ssh", "tls", "ssl", "jwt", "oauth", "auth",
     "pkce", "rs256", "hs256", "es256", "bcrypt", "argon2", "argon2id", "scrypt", "hashed", "hash",
     "client", "post", "basic", "bearer", "sso", "saml", "oidc", "ldap", "tenant", "env", "config"}
)  # fmt: skip


def looks_like_secret(value: str, kind: str, *, quoted: bool, env_style: bool) -> bool:
    """Whether `value`, written next to a name of `kind`, is a real credential (see the module's
    docstring); `quoted`: it was in quotes; `env_style`: `NAME=value` as in an env file."""
    value = value.strip()
    if not quoted:
        value = value.rstrip(".,;:!?)]}")  # the end of a sentence or of a call, not of the value
    if is_placeholder(value):
        return False
    # A name of words is what it says, but a password given in an env file or quotes is taken as
    # a (weak) password: `DB_PASSWORD=admin-2024`.
    chosen = kind == PASSPHRASE or (kind == PASSWORD and (quoted or env_style))
    if not chosen and is_name_of_words(value):
        return False
    has_digit = any(char.isdigit() for char in value)
    has_letter = any(char.isalpha() for char in value)
    if kind == PIN:
        return value.isdigit() and MIN_PIN_DIGITS <= len(value) <= MAX_PIN_DIGITS
    if kind in (PASSWORD, PASSPHRASE):
        if len(value) < MIN_PASSWORD_CHARS or (not has_letter and len(value) < MIN_PIN_CHARS):
            return False
        # Unquoted words are a type or a scheme (`password: SecretStr`), except in an env file.
        words_only = value.replace("-", "").replace("_", "").isalpha()
        run_together = value.isalpha() and value.islower() and len(value) >= MIN_WORDS_SECRET_CHARS
        return quoted or env_style or kind == PASSPHRASE or not words_only or run_together
    if len(value) < MIN_TOKEN_CHARS or " " in value:
        return False
    if has_digit and has_letter:
        return quoted or env_style or not _is_words_and_a_number(value)
    if (quoted or env_style) and value.isalpha():
        return len(value) >= MIN_WORDS_SECRET_CHARS
    return len(value) >= RANDOM_TOKEN_CHARS and _entropy(value) >= RANDOM_ENTROPY_BITS


def is_placeholder(value: str) -> bool:
    if not value or value.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER.pattern.search(value):
        return True
    words = re.findall(r"[A-Za-z]+|\d+", value.lower().replace("1password", "vault"))
    if all(word in _FILLER_WORDS for word in words):
        return True
    return any(mark in value for mark in _PLACEHOLDER_MARKS)


def is_strong(value: str) -> bool:
    """A value written after a password word with nothing between (`use the password X`): it
    must look chosen to be hard to guess, with at least three of lower case, upper case, digits
    and symbols, or two of them over MIN_PIN_CHARS characters."""
    if not value.isascii() or len(value) < MIN_PASSWORD_CHARS:
        return False
    classes = sum(
        (
            any(char.islower() for char in value),
            any(char.isupper() for char in value),
            any(char.isdigit() for char in value),
            any(not char.isalnum() for char in value),
        )
    )
    return classes >= 3 or (classes == 2 and len(value) >= MIN_PIN_CHARS and not value.isalpha())


def is_name_of_words(value: str) -> bool:
    """`prod-db-credentials-v3`: words and short numbers joined by `-`, `_`, `.` or `:`, at least
    one of them a word that says where or what a secret is."""
    parts = _NAME_SEPARATORS.pattern.split(value.lower())
    if len(parts) < 2 or not all(_NAME_PART.pattern.fullmatch(part) for part in parts):
        return False
    return any(part.rstrip("0123456789") in _REFERENCE_WORDS or part in _REFERENCE_WORDS for part in parts)


def _is_words_and_a_number(value: str) -> bool:
    """`opaque2024format`, `refresh_worker2`: at most three runs of letters and digits, the letters
    whole words (three or more, a vowel), the numbers short: named, not generated."""
    runs = re.findall(r"[A-Za-z]+|\d+|[^A-Za-z\d]+", value)
    if len(runs) > 3:
        return False
    for run in runs:
        if run.isdigit() and len(run) > 4:
            return False
        if run.isalpha() and (len(run) < 3 or not re.search("[aeiouyAEIOUY]", run)):
            return False
        if not run.isalnum() and run not in ("-", "_", "."):
            return False
    return True


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
