"""ahp_py: an independent AHP implementation (SDK core, transports, contract CLI)."""
