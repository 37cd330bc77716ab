"""Agent events and replies on the terminal: the renderers, streamed markdown, the one gate for
outside text."""
