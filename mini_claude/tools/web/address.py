"""Where a web address leads, judged before anything is sent: the URL taken apart (http and https
only, no user name or password, a host that is a name or an address as the resolver itself reads
it: `2130706433` and `0x7f.1` are 127.0.0.1), and whether an address is on the internet or is
this machine's, a private network's or a cloud metadata service's."""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.untrusted import attribute

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
SCHEMES = {"http": 80, "https": 443}
MAX_URL_CHARS = 8_000
# Names that mean this machine (RFC 6761) or a cloud's metadata service whatever DNS says: refused
# before any look-up, as their addresses would be after one.
LOCAL_NAMES = ("localhost",)
METADATA_NAMES = ("metadata.google.internal", "metadata.goog")
# The metadata services of AWS, ECS, Azure, Google (169.254.169.254), AWS's IPv6 one and Alibaba's.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
# What Python's own tables leave out or changed between versions: judged here by name.
_NOT_PUBLIC = (
    (ipaddress.ip_network("100.64.0.0/10"), "web_address_shared"),  # carrier-grade NAT
    (ipaddress.ip_network("64:ff9b:1::/48"), "web_address_private"),  # local-use NAT64
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # a public IPv4 address, reached through IPv6
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")
# Kept as written in a path or query (reserved and already escaped characters); the rest (spaces,
# non-ASCII) is percent-encoded, as a browser sends it.
_PATH_SAFE = "!#$%&'()*+,/:;=?@[]~"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Target:
    """One address to fetch, taken apart."""

    url: str  # as fetched: the host in ASCII, no fragment
    scheme: str
    host: str  # lowercase ASCII, no trailing dot; an IP address in its usual form
    port: int
    path: str  # what the request line asks for: the path and query
    names: tuple[str, ...]  # the host as rules name it: ASCII, then Unicode when it differs
    literal: IP | None  # the host is an address, in whatever form it was written


def parse_target(text: str) -> Target:
    """`text` as a Target; ToolError (one line for the model) when it is not one web_fetch fetches."""
    shown = attribute(text[:MAX_URL_CHARS])
    if len(text) > MAX_URL_CHARS:
        raise ToolError(prompts.notice("web_url_too_long", max_chars=f"{MAX_URL_CHARS:,}"))
    if _CONTROL.search(text.strip()):
        raise ToolError(prompts.notice("web_url_control", url=shown))
    try:
        parts = urlsplit(text.strip())
        port = parts.port
        hostname = parts.hostname or ""
    except ValueError as error:
        raise ToolError(prompts.notice("web_url_invalid", url=shown, problem=attribute(str(error)))) from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ToolError(prompts.notice("web_url_scheme", url=shown, scheme=attribute(scheme or "none")))
    if "@" in parts.netloc:
        raise ToolError(prompts.notice("web_url_userinfo", url=shown))
    if port == 0:  # out of range: urlsplit said so already
        raise ToolError(
            prompts.notice("web_url_invalid", url=shown, problem=prompts.notice("web_problem_port"))
        )
    port = port or SCHEMES[scheme]
    host, names, literal = _host(hostname, port, shown)
    in_url = f"[{host}]" if ":" in host else host
    where = in_url if port == SCHEMES[scheme] else f"{in_url}:{port}"
    path = quote(parts.path or "/", safe=_PATH_SAFE)
    if parts.query:
        path += "?" + quote(parts.query, safe=_PATH_SAFE)
    return Target(f"{scheme}://{where}{path}", scheme, host, port, path, names, literal)


def _host(hostname: str, port: int, shown: str) -> tuple[str, tuple[str, ...], IP | None]:
    """The host's ASCII form, the names rules know it by, and the address it is, if it is one."""
    if not hostname:
        raise ToolError(
            prompts.notice("web_url_invalid", url=shown, problem=prompts.notice("web_problem_no_host"))
        )
    if "%" in hostname:  # an IPv6 zone (`fe80::1%eth0`), or an escape the resolver would not undo
        raise ToolError(
            prompts.notice("web_url_invalid", url=shown, problem=prompts.notice("web_problem_zone"))
        )
    if ":" in hostname:
        try:
            literal: IP = ipaddress.IPv6Address(hostname)
        except ValueError as error:
            raise ToolError(
                prompts.notice("web_url_invalid", url=shown, problem=attribute(str(error)))
            ) from None
        return str(literal), (str(literal),), literal
    name = hostname.removesuffix(".")
    if not name.isascii():
        import idna  # the host names browsers use (IDNA 2008, UTS 46): `straße.de` is not `strasse.de`

        try:
            name = idna.encode(name, uts46=True).decode("ascii")
        except UnicodeError as error:  # idna.IDNAError among them
            raise ToolError(
                prompts.notice("web_url_invalid", url=shown, problem=attribute(str(error)))
            ) from None
    if not _NAME.fullmatch(name):
        raise ToolError(
            prompts.notice("web_url_invalid", url=shown, problem=prompts.notice("web_problem_name"))
        )
    literal_address = _numeric(name, port)
    if literal_address is not None:
        return str(literal_address), (str(literal_address),), literal_address
    return name, tuple(dict.fromkeys((name, _unicode(name)))), None


def _numeric(name: str, port: int) -> IP | None:
    """The address `name` is when the resolver reads it as one (no look-up is made): the way it
    will be read when connecting, decimal, octal and hex forms included."""
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError):
        return None
    return ipaddress.ip_address(str(found[0][4][0]))


def _unicode(name: str) -> str:
    if "xn--" not in name:
        return name
    import idna

    try:
        return str(idna.decode(name))
    except UnicodeError:
        return name


def blocked_name(host: str) -> str | None:
    """Why a name is refused before any look-up (a notice key), or None."""
    if host in LOCAL_NAMES or host.endswith(tuple(f".{name}" for name in LOCAL_NAMES)):
        return "web_address_loopback"
    if host in METADATA_NAMES:
        return "web_address_metadata"
    return None


def why_not_public(ip: IP) -> str | None:
    """Why a fetch must not reach `ip` (a notice key), or None for an address on the internet.
    An IPv4 address inside an IPv6 one (mapped, 6to4, NAT64) is judged as itself."""
    if ip in METADATA_ADDRESSES:
        return "web_address_metadata"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.teredo is not None:
            return "web_address_reserved"
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return why_not_public(inner)
    for network, reason in _NOT_PUBLIC:
        if ip.version == network.version and ip in network:
            return reason
    if ip.is_loopback:
        return "web_address_loopback"
    if ip.is_unspecified:
        return "web_address_unspecified"
    if ip.is_link_local:
        return "web_address_link_local"
    if ip.is_multicast:
        return "web_address_multicast"
    if ip.is_reserved:  # 240.0.0.0/4, the broadcast address, ::/8: Python counts some as private
        return "web_address_reserved"
    if ip.is_private or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local):
        return "web_address_private"
    if not ip.is_global:
        return "web_address_reserved"
    return None


def resolve(host: str, port: int, seconds: float) -> list[IP]:
    """Every address the system's resolver gives for `host`, in its order; TimeoutError after
    `seconds` (the resolver has no deadline of its own: the look-up's thread is left to finish)."""
    found: list[IP] = []
    failed: list[BaseException] = []

    def look_up() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            found.extend(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos)
        except (OSError, UnicodeError, ValueError) as error:
            failed.append(error)

    thread = threading.Thread(target=look_up, name="web-fetch-lookup", daemon=True)
    thread.start()
    thread.join(max(seconds, 0.0))
    if thread.is_alive():
        raise TimeoutError
    if failed or not found:
        problem = (getattr(failed[0], "strerror", None) or str(failed[0])) if failed else "no address"
        raise ToolError(prompts.notice("web_lookup_failed", host=host, problem=attribute(problem)))
    return list(dict.fromkeys(found))
