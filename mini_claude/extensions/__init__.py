"""Extensions users write: skills, custom commands and hooks, loaded from their files and settings."""
