"""Tidy: the side model proposes changes to the memories, the user reviews them, undo takes them back."""
