"""A fetched body as text for the model: HTML turned into markdown (html-to-markdown, imported on
first use), other text as it is, binary refused in one line. The character set comes from a byte
order mark, else the Content-Type header, else the page's own `<meta>`; one that is unknown here,
or bytes that do not fit it, are reported, never dropped."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from email.message import Message

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.files.text_decoding import decode_text
from mini_claude.core.untrusted import attribute

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Text by another name than text/…: passed through as they are.
TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/ecmascript",
     "application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
     "application/sql", "application/graphql", "application/x-sh", "application/x-httpd-php"}
)  # fmt: skip
TEXT_SUFFIXES = ("+json", "+xml", "+yaml")
# Sniffed rather than trusted: a server that names no type, or says only "bytes".
SNIFFED_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})
META_SCAN_BYTES = 4096  # where a page's <meta charset> is looked for (browsers look at 1,024)
# Labels browsers read as another encoding (the WHATWG Encoding standard): pages saying Latin-1
# are written in windows-1252, whose 0x80–0x9F are letters and quotes, not control characters.
WEB_LABELS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "l1": "cp1252",
              "us-ascii": "cp1252", "ascii": "cp1252", "x-sjis": "shift_jis", "x-gbk": "gbk"}  # fmt: skip
BROWSER_FALLBACK = "windows-1252"  # what browsers read a page in that names no charset and is not UTF-8
# Codecs Python knows that no web page is written in (they would turn escapes into characters).
NOT_WEB_CODECS = frozenset({"unicode_escape", "raw_unicode_escape", "idna", "punycode", "undefined"})
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_LOOKS_HTML = re.compile(
    rb"\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)[\s>]", re.IGNORECASE | re.DOTALL
)
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True)
class PageText:
    text: str
    kind: str  # what it was, for the user's line: "html", "text/plain", …
    warnings: tuple[str, ...] = ()  # one line each: how the text was read when not plainly


def page_text(body: bytes, headers: Message, cut: bool, url: str) -> PageText:
    """The body of `url` as text (markdown for a page); ToolError when it is binary."""
    media = (headers.get_content_type() if headers.get("Content-Type") else "").lower()
    declared = headers.get_param("charset", header="Content-Type")
    charset = declared if isinstance(declared, str) and declared.strip() else None
    if media in SNIFFED_TYPES and _LOOKS_HTML.match(body[:META_SCAN_BYTES]):
        media = "text/html"
    if media in HTML_TYPES:
        text, warnings = _decoded(body, charset or _meta_charset(body), cut, fallback=BROWSER_FALLBACK)
        return PageText(html_markdown(text, url), "html", warnings)
    if media.startswith("text/") or media in TEXT_TYPES or media.endswith(TEXT_SUFFIXES):
        text, warnings = _decoded(body, charset, cut)
        return PageText(text, media, warnings)
    if media in SNIFFED_TYPES:
        sniffed = decode_text(body, complete=not cut)
        if sniffed.text is not None:
            return PageText(sniffed.text, media or "text", _warned(sniffed.warning))
    raise ToolError(prompts.notice("web_binary", url=url, type=attribute(media or "no type given")))


def html_markdown(html: str, url: str) -> str:
    """`html` as markdown: headings, lists, tables, code and links kept (made absolute against
    `url`), scripts, styles, navigation, forms and hidden text left out, the title on top."""
    from html_to_markdown import ConversionOptions, convert

    options = ConversionOptions(base_url=url, inline_data_media="alt_text_only")
    try:
        return convert(html, options).content or ""
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # its Rust panics are BaseExceptions: one page must not end the session
        raise ToolError(prompts.notice("web_convert_failed", url=url, problem=type(error).__name__)) from None


def _decoded(
    body: bytes, charset: str | None, cut: bool, fallback: str | None = None
) -> tuple[str, tuple[str, ...]]:
    """`body` as text in `charset` (a byte order mark wins over it, as in browsers); without one,
    UTF-8 (or UTF-16, as `decode_text` tells it), else `fallback` when given."""
    if charset is None or body.startswith(_BOMS):
        decoded = decode_text(body, complete=not cut, guess=False)
        if decoded.warning and fallback is not None and not body.startswith(_BOMS):
            text, warnings = _decoded(body, fallback, cut)
            return text, (prompts.notice("web_charset_guessed", charset=fallback), *warnings)
        return decoded.text or "", _warned(decoded.warning)
    codec = _codec(charset)
    if codec is None:
        decoded = decode_text(body, complete=not cut, guess=False)
        unknown = prompts.notice("web_charset_unknown", charset=attribute(charset))
        return decoded.text or "", (unknown, *_warned(decoded.warning))
    try:
        return codecs.getincrementaldecoder(codec)("strict").decode(body, final=not cut), ()
    except UnicodeDecodeError as error:
        text = codecs.getincrementaldecoder(codec)("replace").decode(body, final=not cut)
        kept = codecs.getincrementaldecoder(codec)("ignore").decode(body, final=not cut)
        count = text.count("\ufffd") - kept.count("\ufffd")  # those the page holds itself are not counted
        places = "1 place" if count == 1 else f"{count:,} places"
        warning = prompts.notice(
            "web_charset_invalid", charset=attribute(charset), places=places, offset=f"{error.start:,}"
        )
        return text, (warning,)


def _codec(charset: str) -> str | None:
    """The Python codec for a page's charset label; None when there is none, or it reads no web text."""
    label = charset.strip().lower()
    try:
        info = codecs.lookup(WEB_LABELS.get(label, label))
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name.replace("-", "_") in NOT_WEB_CODECS:
        return None
    return info.name


def _meta_charset(body: bytes) -> str | None:
    found = _META_CHARSET.search(body[:META_SCAN_BYTES])
    return found.group(1).decode("ascii") if found else None


def _warned(warning: str | None) -> tuple[str, ...]:
    return (prompts.notice("web_text_warning", warning=warning),) if warning else ()
