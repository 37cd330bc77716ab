"""A memory directory as a heavy user would have it: many typed files, 1-4 KB, ASCII and CJK."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.store.naming import MEMORY_TYPES, memory_file_name

SEED = 20261130
DAY = 86_400
MAX_AGE_DAYS = 400

_ASCII_WORDS = (
    "database", "migration", "tests", "deploy", "review", "staging", "retry", "cache", "index", "parser",
    "lexer", "config", "release", "branch", "schema", "payments", "auth", "tokens", "logging", "latency",
)  # fmt: skip
_CJK_WORDS = (
    "数据库", "迁移", "测试", "部署", "缓存", "索引", "日志", "配置", "发布", "分支", "認証", "設定", "検索",
    "速度", "レビュー", "예산", "배포",
)  # fmt: skip


def _phrase(rng: random.Random, words: int) -> str:
    pool = _CJK_WORDS if rng.random() < 0.4 else _ASCII_WORDS
    mixed = [rng.choice(pool if rng.random() < 0.8 else (*_CJK_WORDS, *_ASCII_WORDS)) for _ in range(words)]
    return " ".join(mixed)


def _body(rng: random.Random, target_bytes: int) -> str:
    lines = []
    size = 0
    while size < target_bytes:
        line = _phrase(rng, rng.randint(6, 14)).capitalize() + "."
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    return "\n".join(lines) + "\n"


def memory_text(rng: random.Random, number: int) -> tuple[str, str, str]:
    """(type, name, whole file text) of memory `number`; the file takes 1-4 KB."""
    memory_type = MEMORY_TYPES[number % len(MEMORY_TYPES)]
    name = f"{_phrase(rng, rng.randint(2, 4))} {number}"
    description = _phrase(rng, rng.randint(8, 16))
    header = frontmatter.format({"name": name, "description": description, "type": memory_type}, "")
    body_bytes = rng.randint(1024, 4096) - len(header.encode("utf-8"))
    return memory_type, name, header + _body(rng, max(64, body_bytes))


def write_memory_dir(root: Path, count: int, *, seed: int = SEED) -> None:
    """`count` memory files with spread-out mtimes (no index: the store builds it)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    taken: set[str] = set()
    now = time.time()
    for number in range(count):
        memory_type, name, text = memory_text(rng, number)
        file_name = memory_file_name(memory_type, name, taken)
        taken.add(file_name.casefold())
        path = root / file_name
        path.write_text(text, encoding="utf-8")
        stamp = now - rng.uniform(0, MAX_AGE_DAYS * DAY)
        os.utime(path, (stamp, stamp))
