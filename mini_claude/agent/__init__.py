"""The turn loop: model calls, tool calls, how a turn ends, what each request holds, compaction."""
