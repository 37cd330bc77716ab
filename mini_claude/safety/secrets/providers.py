"""Credentials recognised by their own shape: tokens by the prefix their provider marks them with
(gitleaks' rules, detect-secrets' plugins), a few by a documented pattern, private keys by their
header or the first bytes of their body."""

from __future__ import annotations

import functools
import itertools
import re

from mini_claude.safety.secrets.values import is_words_and_a_number

# Tokens their provider marks with a prefix: a token is the prefix (not glued to a word before it)
# and a body of at least MIN_BODY_CHARS characters that looks generated (_generated).
MIN_BODY_CHARS = 16
MIN_SWITCHES_PER_CHAR = 0.3  # a generated body's: 0.4 (base36) to 0.6 (base62); CamelCase's, less
PREFIXES: dict[str, tuple[str, ...]] = {
    "an Anthropic": ("sk-ant-",), "an OpenAI": ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"),
    "a Groq": ("gsk_",), "an xAI": ("xai-",), "a Perplexity": ("pplx-",), "a Replicate": ("r8_",),
    "a Hugging Face": ("hf_", "api_org_"), "an NVIDIA": ("nvapi-",), "a LangSmith": ("lsv2_pt_", "lsv2_sk_"),
    "a Pinecone": ("pcsk_",), "a Tavily": ("tvly-",),
    "a GitHub": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "a GitLab": ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glimt-", "glft-", "gloas-",
        "glagent-", "glffct-", "GR1348941", "_gitlab_session="), "an Atlassian": ("ATATT3", "ATBB"),
    "an npm": ("npm_",), "a PyPI": ("pypi-AgE",), "a RubyGems": ("rubygems_",), "a Clojars": ("CLOJARS_",),
    "a Sourcegraph": ("sgp_",), "a NuGet": ("oy2",), "a Postman": ("PMAK-",),
    "a Docker Hub": ("dckr_pat_", "dckr_oat_"), "an Artifactory": ("AKCp", "cmVmd"),
    "an Alibaba Cloud": ("LTAI",), "a Tencent Cloud": ("AKID",),
    "a Google": ("AIza", "GOCSPX-", "ya29.", "1//0", "GOOG1"), "a Yandex Cloud": ("AQVN",),
    "a Heroku": ("HRKU-",), "a Netlify": ("nfp_",), "a Vercel": ("vercel_blob_rw_",), "a Render": ("rnd_",),
    "a Deno Deploy": ("ddp_", "ddw_"), "a Fly.io": ("fo1_", "fm1r_", "fm1a_", "fm2_"),
    "a Supabase": ("sbp_",), "a DigitalOcean": ("dop_v1_", "doo_v1_", "dor_v1_"),
    "a PlanetScale": ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"), "a Scalingo": ("tk-us-",),
    "a Pulumi": ("pul-",), "a HashiCorp Vault": ("hvs.", "hvb."),
    "a Doppler": ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."), "a Tailscale": ("tskey-",),
    "a 1Password": ("ops_eyJ", "A3-"), "an Infracost": ("ico-",), "an OpenShift": ("sha256~",),
    "a Databricks": ("dapi",), "a Dynatrace": ("dt0c01.",), "a Prefect": ("pnu_",),
    "an age": ("AGE-SECRET-KEY-1",),
    "a Slack": ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.xox", "xapp-"),
    "a SendGrid": ("SG.",), "a Sendinblue": ("xkeysib-",),
    "a Stripe": ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"),
    "a Square": ("sq0atp-", "sq0csp-", "EAAA"), "a Facebook": ("EAAC", "EAAM"),
    "a Shopify": ("shpat_", "shpca_", "shppa_", "shpss_"),
    "a Plaid": ("access-sandbox-", "access-development-", "access-production-"),
    "a Flutterwave": ("FLWSECK-", "FLWSECK_TEST-"), "a Duffel": ("duffel_test_", "duffel_live_"),
    "an EasyPost": ("EZAK", "EZTK"), "a Shippo": ("shippo_live_", "shippo_test_"), "a Linear": ("lin_api_",),
    "a Notion": ("ntn_",), "an Airtable": ("pat",), "a Figma": ("figd_",), "a Contentful": ("CFPAT-",),
    "a ReadMe": ("rdme_",), "a Typeform": ("tfp_",), "a Frame.io": ("fio-u-",), "an Adobe": ("p8e-",),
    "a Defined Networking": ("dnkey-",),
    "a Sentry": ("sntrys_", "sntryu_"), "a Grafana": ("glsa_", "glc_", "eyJrIjoi"),
    "a New Relic": ("NRAK-", "NRAA-", "NRII-", "NRJS-"), "a Mapbox": ("sk.eyJ",), "a Dropbox": ("sl.",),
}  # fmt: skip
_PREFIXED = tuple((prefix, provider) for provider, prefixes in PREFIXES.items() for prefix in prefixes)
_ALL_PREFIXES = tuple(prefix for prefix, _ in _PREFIXED)
_BODY = r"[A-Za-z0-9_.=-]{1,512}"  # no token is longer: a long run costs no more than this
# Where a token could start in a word long enough to hold one (not glued to a letter, digit, `_`
# or `-`): looked for in those words only, far faster than a search for each prefix in the text.
_TOKEN_START = rf"(?<![\w-])(?=[\w.~/=-]{{{MIN_BODY_CHARS + 2}}})"

_KEY = "a private key"
_KEY_BODY = "a private key (its base64 body, without the BEGIN line)"
# Shapes a prefix does not say: (label, keyword, pattern), each tried only on a text holding its
# keyword (gitleaks' keywords).
PATTERNS: tuple[tuple[str, str, str], ...] = (
    (_KEY, "----", r"-----?\s*(?i:(?:BEGIN|END)[ A-Z0-9_-]{0,40}PRIVATE[\s_-]*KEY(?: BLOCK)?)\s*----"),
    (_KEY, "PuTTY-User-Key-File-", r"PuTTY-User-Key-File-\d+:"),
    # the base64 body alone: RSA, EC, Ed25519, EC in PKCS#8, OpenSSH (the keyword: what they share)
    (_KEY_BODY, "", r"\b(?:MII[A-Za-z0-9+/]{3}IBA(?:AK|DAN)|MHcCAQEEI|MIGkAgEBBD|MC4CAQAwBQYDK2Vw"
        r"|MIGHAgEAMBMGByqGSM49|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{16,}"),
    ("an AWS access key", "A", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("an Azure AD client secret", "Q~", r"(?<![\w~.])[A-Za-z0-9_~.]{0,3}\dQ~[A-Za-z0-9_~.-]{31,37}"),
    ("a Terraform Cloud token", ".atlasv1.", r"\b[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    ("a Slack webhook URL", "hooks.slack", r"hooks\.slack\.com/(?:services|workflows|triggers)/[\w/+-]{20,}"),
    ("a Discord webhook URL", "/api/webhooks/", r"discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"),
    ("a Microsoft Teams webhook URL", "IncomingWebhook",
        r"webhook\.office\.com/webhookb2/\S{40,}/IncomingWebhook/\w{32}"),
    ("a Discord bot token", ".", r"\b[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}\b"),
    ("a Telegram bot token", ":AA", r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),  # also inside its URL
    ("a Mailchimp API key", "-us", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("a Mailgun API key", "key-", r"\bkey-[0-9a-zA-Z]{32}\b"),
    ("a Twilio API key", "SK", r"\bSK[0-9a-fA-F]{32}\b"),
    ("a Sentry DSN", "://", r"https?://[a-f0-9]{32}(?::[a-f0-9]{32})?@[\w.-]+/\d+"),
    ("a JSON web token", "eyJ", r"\beyJ[A-Za-z0-9_-]{10,500}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
)  # fmt: skip


@functools.cache
def compiled(source: str) -> re.Pattern[str]:
    """A rule's regex, compiled on first use: compiling every rule at import slows start-up."""
    return re.compile(source)


def provider_token(text: str) -> str | None:
    """The label of the first token above that `text` holds, or None."""
    for label, keyword, source in PATTERNS:
        if keyword in text and compiled(source).search(text):  # the cheap test first
            return label
    for word in text.split():
        for start in compiled(_TOKEN_START).finditer(word) if len(word) > MIN_BODY_CHARS else ():
            if word.startswith(_ALL_PREFIXES, start.start()):
                for prefix, provider in _PREFIXED:
                    body = compiled(_BODY).match(word, start.start() + len(prefix))
                    if word.startswith(prefix, start.start()) and body and _generated(body[0]):
                        return f"{provider} token ({prefix}…)"
    return None


def _generated(body: str) -> bool:
    """Long enough, no placeholder (`xxxx…`) and not a name: it switches between lower case, upper
    case and digits as a generated string does (`R8sT2vXq9LmN…`), or its parts are not words and
    short numbers (`8f3a2b1c…`, not `hub_download_v2`)."""
    if re.search(r"(?i)x{4}|(.)\1{5}", body):
        return False
    kinds = [2 if char.isdigit() else char.isupper() for char in body if char.isalnum()]
    switches = sum(kind != previous for previous, kind in itertools.pairwise(kinds))
    parts = [part for part in re.split(r"[_.=-]+", body) if part]
    named = all(
        is_words_and_a_number(part) or re.fullmatch(r"[A-Za-z]{0,3}\d{1,4}[A-Za-z]{0,3}", part)
        for part in parts
    )
    return len(kinds) >= MIN_BODY_CHARS and (switches >= len(kinds) * MIN_SWITCHES_PER_CHAR or not named)
