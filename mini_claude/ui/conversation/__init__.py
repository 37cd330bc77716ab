"""Looking back on the conversation: the transcript view (Ctrl+O), /export, /rewind."""
