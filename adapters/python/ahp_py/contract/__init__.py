"""The adapter contract (docs/CONTRACT.md) that every suite shares: config
files, readiness, the control listener, receipts, barriers, scripted replies,
the server process and client peers, and the report."""
