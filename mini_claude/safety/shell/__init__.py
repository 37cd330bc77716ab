"""Shell commands as bash runs them: parsed into simple commands and redirects, the read-only
ones recognised, and the rule an "always" answer saves."""
