"""One-key questions: the permission question's layout and the key that answers it."""
