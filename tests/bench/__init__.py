"""`make bench`: what users feel, each figure a ratio against a baseline measured in the same run.

Run with `python -m tests.bench` from the repository root. Not collected by pytest (see pyproject).
"""
