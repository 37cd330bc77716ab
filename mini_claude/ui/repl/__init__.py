"""The interactive prompt: keys, typed-ahead input, history, completion, and the REPL loop itself."""
