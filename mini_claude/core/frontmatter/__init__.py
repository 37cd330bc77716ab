"""The `---` frontmatter block of memory, skill, command and rule files: codec.py reads and writes it."""
