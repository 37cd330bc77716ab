"""What the user types while a reply runs: kept, shown under the reply, handed to the next prompt."""
