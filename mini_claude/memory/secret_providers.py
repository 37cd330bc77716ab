"""The token rules of the secret check: credentials recognised by their provider's documented
prefix and shape (gitleaks' rule set), and the lazily compiled pattern every rule is built on."""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """A regex compiled on first use: compiling every rule at import would add ~15 ms to start-up,
    which builds the memory writer. `unicode_properties`: compiled by the `regex` library, which
    knows \\p{…} properties (also imported then, only when a text is not ASCII)."""

    def __init__(self, source: str, *, unicode_properties: bool = False) -> None:
        self.source = source
        self.unicode_properties = unicode_properties
        self._compiled: Any = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            if self.unicode_properties:
                import regex

                self._compiled = regex.compile(self.source)
            else:
                self._compiled = re.compile(self.source)
        return self._compiled


# Each pattern starts with its literal prefix, so the regex engine can skip to it; the word
# boundary before it is checked in Python (a leading \b would make the engine try every position).
PROVIDER_RULES: tuple[tuple[str, LazyPattern], ...] = tuple(
    (label, LazyPattern(pattern))
    for label, pattern in (
        (
            "a private key",
            r"-----\s*(?i:(?:BEGIN|END)[ A-Z0-9_-]{0,40}PRIVATE[\s_-]*KEY(?: BLOCK)?)\s*-----",
        ),
        ("a private key", r"PuTTY-User-Key-File-\d+:"),
        ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI API key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        (
            "an AWS access key",
            r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b",
        ),
        ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"),
        ("a GitLab token", r"gl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|oas|agent)-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"),
        ("a Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"),
        ("a Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}"),
        ("an npm token", r"npm_[A-Za-z0-9]{36}\b"),
        ("a Hugging Face token", r"hf_[A-Za-z0-9]{30,}\b"),
        ("a PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
        ("a Google API key", r"AIza[0-9A-Za-z_-]{35}"),
        ("a Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{20,}"),
        ("a Stripe key", r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("a SendGrid key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        ("a DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}\b"),
        ("a HashiCorp Vault token", r"hv[sb]\.[A-Za-z0-9_-]{24,}"),
        ("a Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
        ("a Telegram bot token", r"\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
        ("an age secret key", r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\b"),
        ("a JSON web token", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        ("an Azure storage key", r"[Aa]ccount[Kk]ey=[A-Za-z0-9+/]{40,}"),
        ("a Twilio API key", r"SK[0-9a-fA-F]{32}\b"),
        ("a Mailchimp API key", r"[0-9a-f]{32}-us\d{1,2}\b"),
        ("a Mailgun API key", r"key-[0-9a-zA-Z]{32}\b"),
        ("a Square token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|EAAA[A-Za-z0-9+=-]{60,}"),
        ("a Databricks token", r"dapi[a-f0-9]{32}\b"),
        ("a Groq API key", r"gsk_[A-Za-z0-9]{40,}"),
        ("an xAI API key", r"xai-[A-Za-z0-9]{60,}"),
        ("a Perplexity API key", r"pplx-[A-Za-z0-9]{40,}"),
        ("a Replicate token", r"r8_[A-Za-z0-9]{30,}"),
        ("a Linear API key", r"lin_api_[A-Za-z0-9]{30,}"),
        ("a Notion token", r"ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}\b"),
        ("an Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{100,}"),
        ("a Sentry token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
        ("a Grafana token", r"gl(?:sa|c)_[A-Za-z0-9+/_=-]{32,}"),
        ("a Doppler token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
        ("a Postman API key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
        ("a Figma token", r"figd_[A-Za-z0-9_-]{40,}"),
        ("a 1Password service account token", r"ops_eyJ[A-Za-z0-9+/=]{100,}"),
        ("a Tailscale key", r"tskey-[a-z]+-[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}"),
        ("a Supabase token", r"sbp_[a-f0-9]{40}\b"),
        ("a Netlify token", r"nfp_[A-Za-z0-9]{36}\b"),
        ("a Pulumi token", r"pul-[a-f0-9]{40}\b"),
        ("a Terraform Cloud token", r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
        ("a Heroku API key", r"HRKU-[A-Za-z0-9_-]{40,}"),
        ("a New Relic key", r"NR(?:AK|AA|II|JS)-[A-Za-z0-9]{20,}"),
        ("a Dynatrace token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    )
)
