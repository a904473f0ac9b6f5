"""Shared machinery every suite uses: run context, processes, servers, clients, receipts."""
