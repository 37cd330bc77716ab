"""The model's regexes and globs: compiled within limits and matched under a time limit.

`re` cannot be stopped: `(a+)+$` on a 41-character line backtracks for hours. The `regex` library
takes a `timeout=` on every match, so each search call gets a time budget. Its compiler unrolls
counted repeats (`(a{100}){100}` is 10,000 nodes), so nested counts are bounded before compiling.
`regex` is imported on the first search, not at start-up.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError

if TYPE_CHECKING:
    from collections.abc import Callable

SEARCH_TIME_LIMIT_S = 20.0  # one whole list_files or grep_search call
MATCH_TIME_LIMIT_S = 2.0  # one file (grep_search) or one path (list_files); then it is skipped
MAX_PATTERN_CHARS = 2_000
# What the regex compiler may build once counted repeats are unrolled: 100,000 nodes compile in
# ~0.05 s, while `(((a{100}){100}){100}){100}` would take gigabytes.
MAX_PATTERN_SIZE = 100_000

_COUNTED_REPEAT = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = "pPNxu"  # \p{L}, \N{name}, \x{263a}: their braces are not a repeat
# `(?flags)` or `(?flags-flags:`: any letters or digits, so that no spelling of `x` is missed.
_SET_OPERATORS = ("--", "&&", "||", "~~")  # version 1 set operations
_FLAG_GROUP = re.compile(r"\(\?([A-Za-z0-9]*)(?:-[A-Za-z0-9]*)?[:)]")


class TooSlow(Exception):
    """One file or path used up its MATCH_TIME_LIMIT_S; the search goes on without it."""


class OutOfTime(TooSlow):
    """The whole search used up SEARCH_TIME_LIMIT_S."""


class SearchClock:
    """The time budget of one search call: the whole of it, and each file or path in it."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + SEARCH_TIME_LIMIT_S
        self._item_deadline = self.deadline

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    def start_item(self) -> None:
        """A new file or path: it gets MATCH_TIME_LIMIT_S, within what is left of the whole."""
        self._item_deadline = min(self.deadline, time.monotonic() + MATCH_TIME_LIMIT_S)

    def run(self, match: Callable[..., Any], *args: Any) -> Any:
        """`match(*args)` (a compiled pattern's search or fullmatch) within the current budget."""
        remaining = self._item_deadline - time.monotonic()
        if remaining > 0:
            try:
                return match(*args, timeout=remaining)
            except TimeoutError:
                pass
        raise OutOfTime if self._item_deadline >= self.deadline else TooSlow


def compile_regex(pattern: str, flags: int = 0) -> Any:
    """A grep pattern compiled by `regex`, or a ToolError saying what is wrong with it."""
    import regex

    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(prompts.notice("grep_pattern_too_long", length=len(pattern), limit=MAX_PATTERN_CHARS))
    if turns_on_verbose(pattern) or flags & regex.VERBOSE:
        raise ToolError(prompts.notice("grep_pattern_verbose", pattern=pattern))
    size = unrolled_size(pattern)
    if size > MAX_PATTERN_SIZE:
        raise ToolError(
            prompts.notice(
                "grep_pattern_too_big", pattern=pattern, size=f"{size:,}", limit=f"{MAX_PATTERN_SIZE:,}"
            )
        )
    try:
        return regex.compile(pattern, flags)
    except (regex.error, RecursionError, OverflowError, ValueError, MemoryError) as error:
        reason = "it nests too deeply" if isinstance(error, RecursionError) else error
        raise ToolError(prompts.notice("grep_bad_regex", pattern=pattern, error=reason)) from None


def compile_glob(glob: str, parameter: str) -> Any:
    """A glob (see glob_to_regex) compiled for matching, or a ToolError naming `parameter`."""
    import regex

    if len(glob) > MAX_PATTERN_CHARS:
        raise ToolError(prompts.notice("glob_too_long", parameter=parameter, limit=MAX_PATTERN_CHARS))
    try:
        return regex.compile(glob_to_regex(glob), regex.DOTALL)
    except (regex.error, RecursionError, OverflowError, ValueError) as error:
        raise ToolError(prompts.notice("glob_invalid", parameter=parameter, glob=glob, error=error)) from None


def unrolled_size(pattern: str) -> int:
    """An upper bound of the nodes `regex` builds for `pattern`: every atom counts 1, and a counted
    repeat ({n}, {m,n}) multiplies what it repeats by its larger bound, so nested repeats multiply.

    It must read the pattern as `regex` does, or a repeat it takes for text is unrolled unseen:
    a comment `(?#…)` counts nothing and a repeat after it repeats the atom before it. A class
    holding another `[` (a POSIX class `[[:alpha:]]`, a nested set in version 1) or a set
    operator (`--`, `&&`, `||`, `~~`: in version 1 a `]` right after one is literal) may end where
    this reading does not see, so such a pattern gets a bound that holds however it is read: its
    length times every count in it. Verbose mode (whitespace and `#` comments ignored, scoped
    differently by different `regex` versions) cannot be read safely: `compile_regex` refuses it."""
    open_groups = [0]  # the size so far of each group still open, outermost first
    last = 0  # the size of the atom a quantifier would repeat
    nested_class = False
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == "{" and (repeat := _COUNTED_REPEAT.match(pattern, i)):
            factor = _repeat_factor(repeat)
            open_groups[-1] += last * (factor - 1)
            last *= factor
            i = repeat.end()
            continue
        if pattern.startswith("(?#", i):
            i = _after_comment(pattern, i)  # nothing, and the atom before stays the one repeated
            continue
        if char == "(":
            open_groups.append(0)
            last = 0
            i += 1
            continue
        if char == ")" and len(open_groups) > 1:
            last = max(open_groups.pop(), 1)
            i += 1
        elif char == "\\":
            i = _after_escape(pattern, i)
            last = 1
        elif char == "[":
            start, i = i, _after_class(pattern, i)
            body = _unescaped(pattern[start + 1 : i - 1])
            nested_class = nested_class or "[" in body or any(op in body for op in _SET_OPERATORS)
            last = 1
        else:
            last = 1
            i += 1
        open_groups[-1] += last
    if nested_class:
        return max(sum(open_groups), _bound_however_read(pattern))
    return sum(open_groups)


def turns_on_verbose(pattern: str) -> bool:
    """Whether an inline flag group of `pattern` turns verbose mode on (`(?x)`, `(?ix:`…), read as
    conservatively as `unrolled_size` reads: a group inside a class or comment counts too."""
    return any("x" in flags.group(1) for flags in _FLAG_GROUP.finditer(pattern))


def _repeat_factor(repeat: re.Match[str]) -> int:
    return max(int(repeat.group(1) or 0), int(repeat.group(2) or 0), 1)


def _bound_however_read(pattern: str) -> int:
    """Every atom repeated by every count: no reading of `pattern` builds more."""
    bound = len(pattern)
    for repeat in _COUNTED_REPEAT.finditer(pattern):
        bound *= _repeat_factor(repeat)
        if bound > MAX_PATTERN_SIZE:
            break  # refused already; the product of many counts need not be built
    return bound


def _after_comment(pattern: str, i: int) -> int:
    """The index after the comment `(?#…)` at `i`: it ends at the first `)` no backslash escapes."""
    j = i + 3
    while j < len(pattern) and pattern[j] != ")":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _unescaped(text: str) -> str:
    return re.sub(r"\\.", "", text, flags=re.DOTALL)


def _after_escape(pattern: str, i: int) -> int:
    if pattern[i + 1 : i + 2] in tuple(_BRACED_ESCAPES) and pattern[i + 2 : i + 3] == "{":
        close = pattern.find("}", i + 3)
        return len(pattern) if close == -1 else close + 1
    return i + 2


def _after_class(pattern: str, i: int) -> int:
    """The index after the character class starting at `i` (`]` first in a class is literal)."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def glob_to_regex(pattern: str) -> str:
    """A glob as a regex over '/'-separated relative paths: `*`, `?`, `[...]`, `{a,b}`, `**/`."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
            after = i + 2
            if after == len(pattern):
                out.append(".*")
                i = after
                continue
            if pattern[after] == "/":
                while pattern.startswith("**/", after + 1):  # `**/**/` is `**/`, and backtracks less
                    after += 3
                out.append("(?:.*/)?")  # zero or more folders
                i = after + 1
                continue
        if char == "*":
            while pattern.startswith("*", i + 1):  # `**` inside a name is one `*`
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            body = "^" + body[1:] if body.startswith("!") else body.replace("^", "\\^", 1)
            out.append(f"[{body}]")
            i = end + 1
            continue
        elif char == "{" and (end := pattern.find("}", i)) != -1 and "," in pattern[i:end]:
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(glob_to_regex(option) for option in options) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
