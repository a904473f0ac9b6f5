"""An upstream-contract emulator: an SDK-shaped interop adapter (contract v1) for tests.

Standard library only, written from the protocol and contract descriptions, and
independent of the harness it tests: nothing here imports, starts or copies the
harness (`interop/`) or its adapters (`adapters/`). `interop.py` is the entry
point the checkout's `interop/adapter.json` names.
"""
