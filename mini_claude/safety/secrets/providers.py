"""The token rules of the secret check: credentials recognised by their provider's documented
prefix and shape (gitleaks' rule set, detect-secrets' plugins), private keys by their header or
by the first bytes of their encoded body, and the lazily compiled pattern every rule is built on."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


class LazyPattern:
    """A regex compiled on first use: compiling every rule at import would add ~15 ms to start-up,
    which builds the memory writer. `unicode_properties`: compiled by the `regex` library, which
    knows \\p{…} properties (also imported then, only when a text is not ASCII)."""

    def __init__(self, source: str, *, unicode_properties: bool = False) -> None:
        self.source = source
        self.unicode_properties = unicode_properties
        self._compiled: Any = None  # a regex.Pattern when unicode_properties: the same methods

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            if self.unicode_properties:
                import regex

                self._compiled = regex.compile(self.source)
            else:
                self._compiled = re.compile(self.source)
        compiled: re.Pattern[str] = self._compiled
        return compiled


# What may stand just before a token: a token glued to a word is part of that word.
WORD = "word"  # not a letter, digit or underscore
NON_DIGIT = "non-digit"  # a Telegram token follows `bot` in its URL: only a digit would lengthen it
ANYWHERE = "anywhere"  # the pattern itself says where it starts (`://` of a URL)


class ProviderRule:
    """A token's pattern; `keywords`: the text must hold one before the regex runs (gitleaks'
    keywords), by default the literal text each branch of the pattern starts with (worked out on
    first use, like the pattern, to keep start-up light); `confirm`: a check of the matched text
    that a regex cannot make."""

    __slots__ = ("_keywords", "boundary", "confirm", "label", "pattern")

    def __init__(
        self,
        label: str,
        source: str,
        keyword: str | None,
        boundary: str,
        confirm: Callable[[str], bool] | None,
    ) -> None:
        self.label, self.pattern, self.boundary, self.confirm = label, LazyPattern(source), boundary, confirm
        self._keywords: tuple[str, ...] | None = None if keyword is None else (keyword,)

    @property
    def keywords(self) -> tuple[str, ...]:
        if self._keywords is None:
            found = tuple(_literal_prefix(branch) for branch in _top_level_alternatives(self.pattern.source))
            if min(len(keyword) for keyword in found) < 2:
                raise ValueError(f"the rule for {self.label} needs an explicit keyword")
            self._keywords = found
        return self._keywords


def _top_level_alternatives(source: str) -> list[str]:
    """`a|b(?:c|d)` → [`a`, `b(?:c|d)`]: the branches a match can start with."""
    branches, depth, start, index = [], 0, 0, 0
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 1
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(source[start:index])
            start = index + 1
        index += 1
    return [*branches, source[start:]]


def _literal_prefix(source: str) -> str:
    """The literal text a pattern starts with (`sk-ant-` of `sk-ant-[…]`): the rule's keyword."""
    prefix, index = "", 0
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source) and not source[index + 1].isalnum():
            char, index = source[index + 1], index + 1
        elif char in "[](){}?*+|^$.\\":
            break
        if index + 1 < len(source) and source[index + 1] in "?*{":
            break  # an optional or repeated character is not part of every match
        prefix += char
        index += 1
    return prefix


def _private_key_inside(matched: str) -> bool:
    """Whether base64 text (`LS0tLS1CRUdJTi…`, a kubeconfig's client-key-data) decodes to a PEM
    private key header, not a certificate's."""
    import base64
    import binascii

    head = matched[: len(matched) // 4 * 4][:96]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return False


def _rule(
    label: str,
    source: str,
    *,
    keyword: str | None = None,
    boundary: str = WORD,
    confirm: Callable[[str], bool] | None = None,
) -> ProviderRule:
    return ProviderRule(label, source, keyword, boundary, confirm)


_KEY = "a private key"
_ENCODED_KEY = "a private key (its base64 body, without the BEGIN line)"
PROVIDER_RULES: tuple[ProviderRule, ...] = (
    _rule(
        _KEY,
        r"-----?\s*(?i:(?:BEGIN|END)[ A-Z0-9_-]{0,40}PRIVATE[\s_-]*KEY(?: BLOCK)?)\s*----",
        boundary=ANYWHERE,
    ),
    _rule(_KEY, r"PuTTY-User-Key-File-\d+:"),
    _rule(
        "a private key (a base64-encoded PEM block)",
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{40,}",
        confirm=_private_key_inside,
    ),
    _rule(_ENCODED_KEY, r"MII[A-Za-z0-9+/]{3}IBA(?:AK|DAN)[A-Za-z0-9+/]{20,}"),  # RSA
    _rule(_ENCODED_KEY, r"MHcCAQEEI[A-Za-z0-9+/]{20,}"),  # EC
    _rule(_ENCODED_KEY, r"MIGkAgEBBD[A-Za-z0-9+/]{20,}"),
    _rule(_ENCODED_KEY, r"MC4CAQAwBQYDK2Vw[A-Za-z0-9+/]{16,}"),  # Ed25519
    _rule(_ENCODED_KEY, r"MIGHAgEAMBMGByqGSM49[A-Za-z0-9+/]{20,}"),  # EC, PKCS#8
    _rule(_ENCODED_KEY, r"b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{16,}"),  # OpenSSH
    _rule("an age secret key", r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\b"),
    _rule(
        "a 1Password secret key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}\b",
    ),
    # --- AI services
    _rule("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    _rule("an OpenAI API key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    _rule("a Groq API key", r"gsk_[A-Za-z0-9]{40,}"),
    _rule("an xAI API key", r"xai-[A-Za-z0-9]{60,}"),
    _rule("a Perplexity API key", r"pplx-[A-Za-z0-9]{40,}"),
    _rule("a Replicate token", r"r8_[A-Za-z0-9]{30,}"),
    _rule("a Hugging Face token", r"hf_[A-Za-z0-9]{30,}\b"),
    _rule("a Hugging Face token", r"api_org_[A-Za-z0-9]{30,}\b"),
    _rule("an NVIDIA API key", r"nvapi-[A-Za-z0-9_-]{40,}"),
    _rule("a LangSmith API key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b"),
    _rule("a Pinecone API key", r"pcsk_[A-Za-z0-9]{4,}_[A-Za-z0-9]{40,}"),
    _rule("a Tavily API key", r"tvly-[A-Za-z0-9_-]{24,}"),
    # --- clouds and hosting
    _rule(
        "an AWS access key",
        r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA)[A-Z0-9]{16}\b",
        keyword="A",
    ),
    _rule("an Alibaba Cloud access key", r"LTAI[A-Za-z0-9]{20}\b"),
    _rule("a Tencent Cloud secret id", r"AKID[A-Za-z0-9]{32}\b"),
    _rule("a Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    _rule("a Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{20,}"),
    _rule("a Google OAuth token", r"ya29\.[A-Za-z0-9_-]{30,}"),
    _rule("a Google OAuth token", r"1//0[A-Za-z0-9_-]{40,}"),
    _rule("a Google Cloud Storage HMAC key", r"GOOG1[A-Z0-9]{30,}\b"),
    _rule("a Yandex Cloud key", r"AQVN[A-Za-z0-9_-]{35,38}\b|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}"),
    _rule("an Azure storage key", r"[Aa]ccount[Kk]ey=[A-Za-z0-9+/]{40,}", keyword="ccount"),
    _rule("an Azure AD client secret", r"[A-Za-z0-9_~.]{0,3}\dQ~[A-Za-z0-9_~.-]{31,37}", keyword="Q~"),
    _rule("a DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}\b", keyword="_v1_"),
    _rule("a Heroku API key", r"HRKU-[A-Za-z0-9_-]{40,}"),
    _rule("a Netlify token", r"nfp_[A-Za-z0-9]{36}\b"),
    _rule("a Vercel token", r"vercel_blob_rw_[A-Za-z0-9]{16}_[A-Za-z0-9]{30}"),
    _rule("a Render API key", r"rnd_[A-Za-z0-9]{32}\b"),
    _rule("a Deno Deploy token", r"ddp_[A-Za-z0-9]{36}\b|ddw_[A-Za-z0-9]{36}\b"),
    _rule("a Fly.io token", r"fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}"),
    _rule("a Supabase token", r"sbp_[a-f0-9]{40}\b"),
    _rule("a PlanetScale token", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}"),
    _rule("a Cloudflare origin CA key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    _rule("a Scalingo token", r"tk-us-[\w-]{48}"),
    _rule("a Pulumi token", r"pul-[a-f0-9]{40}\b"),
    _rule("a Terraform Cloud token", r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", keyword=".atlasv1."),
    _rule("a HashiCorp Vault token", r"hv[sb]\.[A-Za-z0-9_-]{24,}", keyword="hv"),
    _rule("a Doppler token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    _rule("a Tailscale key", r"tskey-[a-z]+-[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}"),
    _rule("a 1Password service account token", r"ops_eyJ[A-Za-z0-9+/=]{100,}"),
    _rule("an Infracost API key", r"ico-[A-Za-z0-9]{32}\b"),
    _rule("an OpenShift token", r"sha256~[\w-]{43}"),
    _rule("a Databricks token", r"dapi[a-f0-9]{32}\b"),
    _rule("a Dynatrace token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _rule("a ClickHouse Cloud key", r"4b1d[A-Za-z0-9]{38}\b"),
    _rule("a Docker Hub token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,}"),
    _rule("an Artifactory token", r"AKCp[A-Za-z0-9]{69}\b|cmVmd[A-Za-z0-9]{59}\b"),
    _rule("an Octopus Deploy API key", r"API-(?=[A-Z]*\d)[A-Z0-9]{26}\b"),
    _rule("a Harness token", r"[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", keyword="at."),
    _rule("a Prefect API key", r"pnu_[A-Za-z0-9]{36}\b"),
    # --- code hosting, packages, CI
    _rule("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    _rule("a GitHub token", r"github_pat_[A-Za-z0-9_]{30,}"),
    _rule(
        "a GitLab token",
        r"gl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|oas|agent|ffct)-[A-Za-z0-9_-]{20,}",
        keyword="gl",
    ),
    _rule("a GitLab token", r"GR1348941[\w-]{20}|_gitlab_session=[0-9a-z]{32}", boundary=ANYWHERE),
    _rule("an Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{100,}|ATBB[A-Za-z0-9_=.-]{28,}"),
    _rule("an npm token", r"npm_[A-Za-z0-9]{36}\b"),
    _rule("a PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    _rule("a RubyGems API key", r"rubygems_[a-f0-9]{48}\b"),
    _rule("a Clojars token", r"CLOJARS_[a-z0-9]{60}\b"),
    _rule("a NuGet API key", r"oy2[a-z0-9]{43}\b"),
    _rule("a Sourcegraph token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b"),
    _rule("a Postman API key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    # --- messaging, mail, payments
    _rule("a Slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"),
    _rule("a Slack token", r"xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}"),
    _rule(
        "a Slack webhook URL",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
        boundary=ANYWHERE,
    ),
    _rule(
        "a Discord webhook URL",
        r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        boundary=ANYWHERE,
    ),
    _rule(
        "a Discord bot token",
        r"[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}\b",
        keyword=".",
    ),
    _rule(
        "a Microsoft Teams webhook URL",
        r"webhook\.office\.com/webhookb2/[\w@-]{40,}/IncomingWebhook/\w{32}",
        boundary=ANYWHERE,
    ),
    _rule("a Telegram bot token", r"\d{8,10}:AA[A-Za-z0-9_-]{33}\b", keyword=":AA", boundary=NON_DIGIT),
    _rule("a SendGrid key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    _rule("a Sendinblue API key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    _rule("a Mailchimp API key", r"[0-9a-f]{32}-us\d{1,2}\b", keyword="-us"),
    _rule("a Mailgun API key", r"key-[0-9a-zA-Z]{32}\b"),
    _rule("a Twilio API key", r"SK[0-9a-fA-F]{32}\b"),
    _rule("a Stripe key", r"sk_(?:live|test|prod)_[A-Za-z0-9]{16,}|rk_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    _rule("a Stripe webhook secret", r"whsec_[A-Za-z0-9]{24,}"),
    _rule("a Square token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|EAAA[A-Za-z0-9+=-]{60,}"),
    _rule("a Facebook access token", r"EAA[CM][A-Za-z0-9]{100,}"),
    _rule("a Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    _rule(
        "a Plaid access token",
        r"access-(?:sandbox|development|production)-[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}",
    ),
    _rule("a Flutterwave secret key", r"FLWSECK(?:_TEST)?-[a-h0-9]{12,32}"),
    _rule("a Duffel token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    _rule("an EasyPost API key", r"EZ[AT]K[A-Za-z0-9]{54}\b"),
    _rule("a Shippo token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}\b"),
    # --- productivity, monitoring, other APIs
    _rule("a Linear API key", r"lin_api_[A-Za-z0-9]{30,}"),
    _rule("a Notion token", r"ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}\b"),
    _rule("an Airtable token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    _rule("a Figma token", r"figd_[A-Za-z0-9_-]{40,}"),
    _rule("a Contentful token", r"CFPAT-[A-Za-z0-9_-]{43}"),
    _rule("a ReadMe API key", r"rdme_[a-z0-9]{70}\b"),
    _rule("a Typeform token", r"tfp_[A-Za-z0-9_.=-]{59}"),
    _rule("a Frame.io token", r"fio-u-[A-Za-z0-9_=-]{64}"),
    _rule("an Adobe client secret", r"p8e-[A-Za-z0-9]{32}\b"),
    _rule("an Intra42 client secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}\b"),
    _rule(
        "an Authress access key",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
        keyword=".acc",
    ),
    _rule("a Defined Networking token", r"dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}"),
    _rule("a MaxMind license key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b", keyword="_mmk"),
    _rule("a Settlemint token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b"),
    _rule("a Sentry token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    _rule("a Sentry DSN", r"://[a-f0-9]{32}(?::[a-f0-9]{32})?@[\w.-]+/\d+", boundary=ANYWHERE),
    _rule("a Grafana token", r"gl(?:sa|c)_[A-Za-z0-9+/_=-]{32,}|eyJrIjoi[A-Za-z0-9]{70,}"),
    _rule("a New Relic key", r"NR(?:AK|AA|II|JS)-[A-Za-z0-9]{19,}"),
    _rule("a Mapbox secret token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    _rule("a Dropbox token", r"sl\.[A-Za-z0-9_=-]{130,}"),
    # The header's length bounded: a run of `eyJeyJ…` is not tried to its end at every `eyJ`.
    _rule("a JSON web token", r"eyJ[A-Za-z0-9_-]{10,500}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    _rule("a JSON web token (base64-encoded)", r"ZXlKaGJHY2lPaU[A-Za-z0-9+/]{40,}"),
)


def provider_token(text: str) -> str | None:
    """The label of the first provider rule whose token `text` holds, or None."""
    for rule in PROVIDER_RULES:
        if not any(keyword in text for keyword in rule.keywords):
            continue  # the cheap test first: most texts hold no rule's keyword
        for match in rule.pattern.pattern.finditer(text):
            if _boundary_before(text, match.start(), rule.boundary) and (
                rule.confirm is None or rule.confirm(match.group(0))
            ):
                return rule.label
    return None


def _boundary_before(text: str, index: int, boundary: str) -> bool:
    if index == 0 or boundary == ANYWHERE:
        return True
    before = text[index - 1]
    if boundary == NON_DIGIT:
        return not before.isdigit()
    return not (before.isalnum() or before == "_")
