"""The grid: clients x servers x transports x auth modes (each suite says what applies)."""

from __future__ import annotations

from dataclasses import dataclass

TRANSPORTS = ("http", "stdio")
AUTH_MODES = ("none", "bearer", "oauth", "mtls", "workload")


@dataclass(frozen=True, order=True)
class Combination:
    client: str
    server: str
    transport: str
    auth: str

    @property
    def key(self) -> str:
        return f"{self.client}--{self.server}--{self.transport}--{self.auth}"

    def label(self) -> str:
        return f"{self.client} -> {self.server} [{self.transport}/{self.auth}]"

    def as_json(self) -> dict[str, str]:
        return {
            "client": self.client,
            "server": self.server,
            "transport": self.transport,
            "auth": self.auth,
        }


def expand(
    clients: list[str], servers: list[str], transports: list[str], auth_modes: list[str]
) -> list[Combination]:
    return sorted(
        Combination(c, s, t, a)
        for c in clients
        for s in servers
        for t in transports
        for a in auth_modes
    )
