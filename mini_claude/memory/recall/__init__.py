"""Recall: ranking memories for a message and choosing the relevant ones with a side query."""
