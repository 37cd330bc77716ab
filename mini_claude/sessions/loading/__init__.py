"""Reading a saved transcript back: the conversation, repaired to one the API accepts."""
