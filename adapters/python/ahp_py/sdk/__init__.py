"""The AHP implementation under test: codec, schemas, engine, auth and transports.

Nothing here knows the interop contract (config files, receipts, reports).
"""
