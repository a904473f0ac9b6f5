"""One module per suite: its client role and its server behaviour."""
