"""Ways around web_fetch's address checks: this machine, a private network or a metadata service
spelled another way (decimal, octal, hex, short, IPv4 inside IPv6, a trailing dot, upper case,
full-width letters), a user name in front of the host, an IPv6 zone, another scheme, a redirect
to any of those, and a deny rule met through another spelling. Every refusal here happens before
anything is sent: literal addresses are resolved for real, which needs no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.cases import case
from tests.web_site import ALLOW_LOCALHOST, WebSite, fetch_context, loopback_alias, site, web_fetch

__all__ = ["site"]  # the fixture

REFUSED = "web_fetch does not fetch from"


@case("permissions", "an address on this machine, a private network or a metadata service is refused unasked")
@pytest.mark.parametrize(
    ("url", "host", "where"),
    [
        ("http://127.0.0.1/", "127.0.0.1", "this machine (loopback)"),
        ("http://127.8.9.10:8080/", "127.8.9.10", "this machine (loopback)"),
        ("http://2130706433/", "127.0.0.1", "this machine (loopback)"),  # decimal
        ("http://0x7f.1/", "127.0.0.1", "this machine (loopback)"),  # hex and short
        ("http://0177.0.0.1/", "127.0.0.1", "this machine (loopback)"),  # octal
        ("http://0x7f000001/", "127.0.0.1", "this machine (loopback)"),
        ("http://127.1/", "127.0.0.1", "this machine (loopback)"),
        ("http://[::1]/", "::1", "this machine (loopback)"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "this machine (loopback)"),  # IPv4-mapped
        ("http://[::ffff:a00:1]/", "::ffff:a00:1", "a private network"),
        ("http://[2002:7f00:1::]/", "2002:7f00:1::", "this machine (loopback)"),  # 6to4
        ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe", "a cloud metadata service"),  # NAT64
        ("http://[::127.0.0.1]/", "::7f00:1", "an address that is not on the internet (reserved)"),
        ("http://0/", "0.0.0.0", "the unspecified address (it means this machine)"),
        ("http://0.0.0.0:22/", "0.0.0.0", "the unspecified address (it means this machine)"),
        ("http://[::]/", "::", "the unspecified address (it means this machine)"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "a cloud metadata service"),
        ("http://2852039166/", "169.254.169.254", "a cloud metadata service"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254", "a cloud metadata service"),
        ("http://100.100.100.200/", "100.100.100.200", "a cloud metadata service"),
        ("http://169.254.1.1/", "169.254.1.1", "a link-local address"),
        ("http://[fe80::1]/", "fe80::1", "a link-local address"),
        ("http://10.0.0.1/", "10.0.0.1", "a private network"),
        ("http://172.16.5.4/", "172.16.5.4", "a private network"),
        ("http://192.168.1.1/", "192.168.1.1", "a private network"),
        ("http://[fc00::1]/", "fc00::1", "a private network"),
        ("http://[fec0::1]/", "fec0::1", "a private network"),
        ("http://100.64.0.1/", "100.64.0.1", "a carrier-grade NAT network"),
        ("http://224.0.0.1/", "224.0.0.1", "a multicast address"),
        ("http://[ff02::1]/", "ff02::1", "a multicast address"),
        ("http://255.255.255.255/", "255.255.255.255", "not on the internet"),
        ("http://240.0.0.1/", "240.0.0.1", "not on the internet"),
        ("http://[2001:db8::1]/", "2001:db8::1", "a private network"),
        ("http://localhost/", "localhost", "this machine (loopback)"),
        ("http://LOCALHOST./", "localhost", "this machine (loopback)"),
        ("http://api.localhost/", "api.localhost", "this machine (loopback)"),
        ("http://ｌｏｃａｌｈｏｓｔ/", "localhost", "this machine (loopback)"),  # full-width letters
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            "metadata.google.internal",
            "a cloud metadata",
        ),
        ("https://Metadata.Google.Internal./", "metadata.google.internal", "a cloud metadata"),
    ],
)
def test_local_and_private_addresses_are_refused(project_dir: Path, url: str, host: str, where: str) -> None:
    ctx, user = fetch_context(project_dir, answers=["y"])
    result = web_fetch(ctx, url)
    assert result.is_error and result.content.startswith(f"{REFUSED} {host}")
    assert f"that is {where}" in result.content
    assert f'an allow rule "WebFetch(domain:{host})"' in result.content  # how to open it, if wanted
    assert user.questions == []  # refused before any question: a yes could not open it


@case("permissions", "a name leading to this machine is refused after the look-up, even with a yes")
def test_a_name_that_resolves_here_is_refused(project_dir: Path) -> None:
    alias = loopback_alias()
    if alias is None:
        pytest.skip("no name other than localhost leads to 127.x in /etc/hosts")
    ctx, user = fetch_context(project_dir, answers=["y"])
    result = web_fetch(ctx, f"http://{alias}:9/")
    assert result.content.startswith(f"{REFUSED} {alias} (127.") and len(user.questions) == 1


@case("permissions", "user@host, zones, other schemes and control characters are refused in one line")
@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://example.com@127.0.0.1/", "holds a user name or password before the host"),
        ("http://user:secret@example.com/", "holds a user name or password before the host"),
        ("http://example.com\\@127.0.0.1/", "holds a user name or password before the host"),
        ("http://[fe80::1%25eth0]/", "a % in the host"),
        ("http://[::1%lo]/", "not an address web_fetch can fetch"),
        ("http://a.com%00.b.com/", "a % in the host"),
        ("file:///etc/passwd", "is a file address"),
        ("gopher://127.0.0.1:6379/_FLUSHALL", "is a gopher address"),
        ("ftp://example.com/", "is a ftp address"),
        ("javascript:alert(1)", "is a javascript address"),
        ("data:text/html,<p>hi</p>", "is a data address"),
        ("localhost:8080/admin", "is a localhost address"),
        ("//127.0.0.1/", "is a none address"),
        ("http://example.com/\r\nHost: 127.0.0.1", "holds a control character"),
        ("http:///path", "it names no host"),
        ("http://example.com:99999/", "not an address web_fetch can fetch"),
        ("http://exa mple.com/", "the host is not a valid name"),
        ("http://" + "a" * 9000 + ".com/", "longer than 8,000 characters"),
    ],
)
def test_addresses_that_are_not_plain_web_addresses_are_refused(
    project_dir: Path, url: str, said: str
) -> None:
    ctx, user = fetch_context(project_dir, answers=["y"])
    result = web_fetch(ctx, url)
    assert result.is_error and said in result.content and user.questions == []
    assert "\r" not in result.content and "\n" not in result.content


@case(
    "permissions",
    "a redirect to this machine, a file or another scheme is refused; the target never hears of it",
)
@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1:{port}/secret",
        "http://2130706433:{port}/secret",
        "http://[::ffff:127.0.0.1]:{port}/secret",
        "//127.0.0.1:{port}/secret",
        "http://169.254.169.254/latest/meta-data/iam/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/_x",
        "http://user@localhost:{port}/secret",
    ],
)
def test_a_redirect_is_checked_like_the_first_address(
    project_dir: Path, site: WebSite, location: str
) -> None:
    inner = WebSite()  # what the redirect aims at: it must never receive a request
    try:
        inner.serve("/secret", "<p>the crown jewels</p>")
        site.redirect("/go", location.format(port=inner.port))
        ctx, user = fetch_context(project_dir, ALLOW_LOCALHOST)
        result = web_fetch(ctx, site.url("/go"))
        assert result.is_error and "crown jewels" not in result.content
        assert inner.requests == [] and user.questions == []
        assert result.content.splitlines()[-1].startswith(f"Redirected: {site.url('/go')} → ")
    finally:
        inner.close()


@case("permissions", "a deny rule holds for the same host spelled another way")
@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("WebFetch(domain:93.184.216.34)", "http://1572395042/"),
        ("WebFetch(domain:93.184.216.34)", "http://0x5d.0xb8.0xd8.0x22/"),
        ("WebFetch(domain:example.com)", "http://EXAMPLE.com./page"),
        ("WebFetch(domain:*.example.com)", "https://Deep.Sub.Example.Com/"),
        ("WebFetch(domain:straße.de)", "http://xn--strae-oqa.de/"),
        ("WebFetch(domain:xn--strae-oqa.de)", "http://straße.de/"),
        ("WebFetch", "http://anything.example/"),
    ],
)
def test_a_deny_rule_is_not_dodged_by_spelling(project_dir: Path, rule: str, url: str) -> None:
    ctx, user = fetch_context(project_dir, mode="bypass", denied=[rule])
    result = web_fetch(ctx, url)
    assert result.denied and "refused by the user's settings" in result.content and user.questions == []


@case(
    "permissions",
    "an allow rule for a domain does not open it through another host, nor a bare rule open private ones",
)
def test_allow_rules_open_only_the_domain_they_name(project_dir: Path, site: WebSite) -> None:
    site.serve("/p", "<p>open</p>")
    ctx, _ = fetch_context(project_dir, "WebFetch(domain:localhost)")
    assert "open" in web_fetch(ctx, site.url("/p")).content
    assert web_fetch(ctx, site.url("/p", host="127.0.0.1")).content.startswith(REFUSED)
    bare, _ = fetch_context(project_dir, "WebFetch")  # fetch anything on the internet unasked
    assert web_fetch(bare, site.url("/p")).content.startswith(REFUSED)
    assert [path for path, _ in site.requests] == ["/p"]
