"""A command line as bash will run it: every simple command in it (those of `&&`, `||`, `;`, `|`,
subshells, `$(…)`, backticks, loops and conditions included), every redirect to a file, and the
folder each starts from as far as a `cd` before it says. Parsed by tree-sitter's bash grammar
(the parser Codex judges commands with): a line it cannot read whole, or holding what cannot be
judged before it runs (a function definition, a variable that changes what runs), carries a
problem, and such a line always asks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from mini_claude.safety.shell.words import Node, Word, nested_commands, node_text, word_of

# Assigning these changes which program runs or what it loads: `PATH=/tmp/x ls` is not `ls`.
DANGEROUS_VARIABLES = re.compile(
    r"PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|IFS|SHELLOPTS|BASHOPTS|GLOBIGNORE|PS4|PROMPT_COMMAND|"
    r"BASH_FUNC_\w*|HOME|CDPATH|SHELL|EDITOR|VISUAL|BROWSER|\w*PAGER\w*|LESS\w*|GIT_\w*|"
    r"PYTHON\w*|NODE_\w*|PERL\w*|RUBY\w*|GEM_\w*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|CLASSPATH|"
    r"NPM_CONFIG_\w*|npm_config_\w*|PIP_\w*|CARGO_\w*|RUSTC\w*|GOFLAGS|CC|CXX|MAKEFLAGS|"
    r"TMPDIR|XDG_\w*"
)
WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
READ_OPERATORS = frozenset({"<"})
DUP_OPERATORS = frozenset({">&", "<&", ">&-", "<&-"})
NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# bash joins `a\<newline>b` into one word; the grammar splits it. Such a line is not judged.
_JOINED_LINE = re.compile(r"[^\s\\]\\\n[^\s]")
_CONTAINERS = frozenset(
    {
        "program", "list", "pipeline", "subshell", "compound_statement", "if_statement",
        "elif_clause", "else_clause", "while_statement", "for_statement", "c_style_for_statement",
        "do_group", "case_statement", "case_item", "negated_command", "redirected_statement",
    }
)  # fmt: skip
_INERT = frozenset({"comment", "heredoc_start", "heredoc_end", "heredoc_content", "file_descriptor"})
_EXPRESSIONS = frozenset(
    {
        "test_command", "binary_expression", "unary_expression", "arithmetic_expansion",
        "postfix_expression", "parenthesized_expression", "ternary_expression",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Assignment:
    name: str
    value: Word | None

    @property
    def changes_what_runs(self) -> bool:
        return DANGEROUS_VARIABLES.fullmatch(self.name) is not None


@dataclass(frozen=True)
class Command:
    """One simple command: its words (the program's name first), the assignments before it, and
    the `cd` arguments met before it (None: somewhere bash alone knows)."""

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...] = ()
    cwd: tuple[str, ...] | None = ()

    @property
    def name(self) -> str | None:
        """The program's name when it is known and plain (no glob): else None."""
        first = self.words[0] if self.words else None
        return first.text if first is not None and first.static and not first.glob else None

    def text(self) -> str:
        """The command as rules match it: its words, each quoted if it needs to be."""
        return " ".join(word.shown() for word in self.words)


@dataclass(frozen=True)
class Redirect:
    target: Word
    write: bool  # > >> &> <> >| (False: < reads)
    cwd: tuple[str, ...] | None = ()


@dataclass
class ParsedLine:
    commands: list[Command] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why the line cannot be judged (it asks)


@cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse_line(line: str, home: str) -> ParsedLine:
    """`line` as bash would run it; `home` is what `~` expands to."""
    parsed = ParsedLine()
    if _JOINED_LINE.search(line):
        parsed.problems.append("a backslash joins two lines inside a word")
    tree = _parser().parse(line.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        parsed.problems.append("bash's grammar could not read all of it")
    _Walker(parsed, home).statement(tree.root_node)
    return parsed


class _Walker:
    def __init__(self, parsed: ParsedLine, home: str) -> None:
        self.parsed = parsed
        self.home = home
        self.cwd: tuple[str, ...] | None = ()

    def statement(self, node: Node) -> None:
        kind = node.type
        if not node.is_named or kind in _INERT:
            return
        if kind in _CONTAINERS:
            for child in node.children:
                if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                    self.arguments_after_redirect(self.redirect(child))
                elif child.is_named and child.type not in _CONTAINERS and _is_word(child):
                    self.nested(child)  # a for loop's list, a case's subject and patterns
                else:
                    self.statement(child)
        elif kind == "command":
            self.command(node)
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind in _EXPRESSIONS:
            self.nested(node)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node)
        elif kind == "function_definition":
            self.parsed.problems.append("it defines a function (a later word may then run it)")
        elif kind == "ERROR":
            self.nested(node)
        else:
            self.parsed.problems.append(f"it holds a {kind.replace('_', ' ')}, which is not judged")
            self.nested(node)

    def command(self, node: Node) -> None:
        words: list[Word] = []
        assignments: list[Assignment] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment(child, standalone=False))
            elif kind == "command_name":
                words.append(self.word(child.children[0] if child.children else child))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                words += self.redirect(child)
            elif child.is_named and kind not in _INERT:
                words.append(self.word(child))
            elif kind == "$":
                words.append(Word("$", None))
        command = Command(tuple(words), tuple(assignments), self.cwd)
        if command.name == "coproc":  # the grammar misreads `coproc NAME { …; }`
            self.parsed.problems.append("it starts a coprocess, which is not judged")
        self.parsed.commands.append(command)
        self.follow_cd(command)

    def arguments_after_redirect(self, words: list[Word]) -> None:
        """`cmd >out arg`: bash gives `arg` to the command the redirect follows."""
        if words and self.parsed.commands:
            last = self.parsed.commands[-1]
            self.parsed.commands[-1] = Command((*last.words, *words), last.assignments, last.cwd)

    def assignment(self, node: Node, *, standalone: bool = True) -> Assignment:
        name_node = node.child_by_field_name("name")
        name = node_text(name_node) if name_node is not None else ""
        if name_node is not None:
            self.nested(name_node)  # `a[$(cmd)]=1`: the subscript runs too
            name = node_text(name_node.child_by_field_name("name") or name_node)
        value_node = node.child_by_field_name("value")
        value = self.word(value_node) if value_node is not None else None
        assignment = Assignment(name, value)
        if standalone and assignment.changes_what_runs:
            self.parsed.problems.append(f"it sets {name}, which changes what later commands run")
        return assignment

    def declaration(self, node: Node) -> None:
        words: list[Word] = [Word(node_text(node.children[0]), node_text(node.children[0]))]
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                assignment = self.assignment(child)
                words.append(Word(node_text(child), None if assignment.value is None else node_text(child)))
            elif child.is_named:
                words.append(self.word(child))
                if child.type == "variable_name" and DANGEROUS_VARIABLES.fullmatch(node_text(child)):
                    self.parsed.problems.append(f"it exports {node_text(child)}, which changes what runs")
        self.parsed.commands.append(Command(tuple(words), (), self.cwd))

    def redirect(self, node: Node) -> list[Word]:
        """Record a redirect to a file; returns the words after its target, which bash gives the
        command as arguments (`cmd >out arg`)."""
        operator = next((node_text(c) for c in node.children if not c.is_named), "")
        targets = [c for c in node.children if c.is_named and c.type not in _INERT]
        self.nested(node)
        if node.type == "heredoc_redirect":
            self.heredoc_backticks(node)
        if node.type != "file_redirect" or not targets:
            return []  # a here-document or here-string: text, no file
        first, rest = targets[0], [self.word(t) for t in targets[1:]]
        target = self.word(first)
        if operator in DUP_OPERATORS or operator.startswith(("<&", ">&")):
            if target.text is not None and (target.text.isdigit() or target.text == "-"):
                return rest  # another descriptor, not a file
            if operator.startswith("<"):
                self.parsed.problems.append("it reads from a descriptor named by an expansion")
                return rest
            operator = "&>"  # `>& file` sends both outputs to the file
        if operator in WRITE_OPERATORS or operator in READ_OPERATORS:
            if target.text not in NOT_FILES:
                self.parsed.redirects.append(Redirect(target, operator in WRITE_OPERATORS, self.cwd))
        else:
            self.parsed.problems.append(f"it uses the redirect {operator}, which is not judged")
        return rest

    def heredoc_backticks(self, node: Node) -> None:
        """The grammar leaves `…` in an unquoted here-document as text; bash runs it."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        if start is None or any(q in node_text(start) for q in "'\"\\"):
            return  # a quoted delimiter: the body is text
        for body in (c for c in node.children if c.type == "heredoc_body"):
            for script in backtick_scripts(node_text(body)):
                if script is None:
                    self.parsed.problems.append("a here-document holds an unclosed backtick")
                    return
                tree = _parser().parse(script.encode("utf-8", "surrogateescape"))
                for statement in tree.root_node.children:
                    self.statement(statement)

    def word(self, node: Node) -> Word:
        self.nested(node)
        return word_of(node, self.home)

    def nested(self, node: Node) -> None:
        """Walk the commands inside substitutions anywhere below `node`."""
        for substitution in nested_commands(node):
            for child in substitution.children:
                self.statement(child)

    def follow_cd(self, command: Command) -> None:
        if command.name not in ("cd", "pushd", "popd") or self.cwd is None:
            return
        arguments = [w for w in command.words[1:] if not (w.static and w.text in ("-P", "-L", "--"))]
        if command.name == "popd" or len(arguments) > 1:
            self.cwd = None
        elif not arguments:
            self.cwd = (*self.cwd, self.home)
        elif arguments[0].static and not arguments[0].glob and arguments[0].text != "-":
            self.cwd = (*self.cwd, arguments[0].text or ".")
        else:
            self.cwd = None


def backtick_scripts(text: str) -> Iterator[str | None]:
    """The commands in backticks in a here-document's body (`\\``, `\\$`, `\\\\` are text),
    as bash runs them; None for a backtick never closed."""
    index, inside, script = 0, False, ""
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            if inside:
                script += text[index : index + 2]
            index += 2
            continue
        if char == "`":
            if inside:
                yield script
            inside, script = not inside, ""
        elif inside:
            script += char
        index += 1
    if inside:
        yield None


def _is_word(node: Node) -> bool:
    return node.type in ("word", "string", "raw_string", "concatenation", "number", "simple_expansion",
                         "expansion", "command_substitution", "variable_name")  # fmt: skip
