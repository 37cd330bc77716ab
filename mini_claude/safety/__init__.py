"""What may be read, written and run: permissions, protected paths, change previews, secrets."""
