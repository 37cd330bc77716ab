"""What every layer shares: settings, events, prompts, errors, paths, atomic and safe file access,
untrusted text."""
