"""The auth suite (docs/AUTH.md): servers refuse bad credentials, clients bad peers."""

from interop.suites.auth.suite import AuthSuite

__all__ = ["AuthSuite"]
