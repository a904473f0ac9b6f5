"""The spec's conformance profiles (conformance/draft/manifest.json, pinned in
requirements.json beside this module) judged from a coverage result.

A profile names requirement ids and the roles it applies to, in the spec's words
`harness` and `backend`; here the harness is the client and the backend the
server. For one adapter in one role, a profile's claim is:

- `met`: every requirement of the profile is `passed` for that adapter and role;
- `failed`: at least one of them is `failed`;
- `untested`: otherwise (a requirement `untested` or `undetermined`, or absent from
  the result).
"""

from __future__ import annotations

from typing import Any

# the spec's role names -> ours
SPEC_ROLES = {"harness": "client", "backend": "server"}
VERDICTS = ("met", "failed", "untested")


def claim(statuses: dict[str, Any], requirements: list[str]) -> str:
    """A profile's verdict from one adapter's requirement statuses in one role."""
    judged = [statuses.get(rid) for rid in requirements]
    if "failed" in judged:
        return "failed"
    if judged and all(status == "passed" for status in judged):
        return "met"
    return "untested"


def profile_verdicts(by_adapter: dict[str, Any], profiles: list[dict[str, Any]]) -> dict[str, Any]:
    """`{profile id: {requirements, roles, verdicts: {adapter: {role: verdict}}}}`, sorted,
    from a coverage result's `byAdapter` (`[adapter][role]["requirements"][id]`). Only
    the roles a profile names are judged."""
    result: dict[str, Any] = {}
    for profile in sorted(profiles, key=lambda p: str(p["id"])):
        requirements = sorted(str(r) for r in profile["requirements"])
        roles = sorted(SPEC_ROLES[r] for r in profile["roles"] if r in SPEC_ROLES)
        verdicts: dict[str, Any] = {}
        for adapter, by_role in sorted(by_adapter.items()):
            verdicts[adapter] = {
                role: claim(by_role.get(role, {}).get("requirements", {}), requirements)
                for role in roles
            }
        result[str(profile["id"])] = {
            "requirements": requirements,
            "roles": roles,
            "verdicts": verdicts,
        }
    return result


def profile_line(
    profiles: dict[str, Any], statuses: dict[str, Any], adapter: str, role: str
) -> str:
    """One terminal line: each profile's verdict for `adapter` as `role`, with the failed
    requirements of a failed profile."""
    parts: list[str] = []
    for pid, profile in sorted(profiles.items()):
        verdict = profile.get("verdicts", {}).get(adapter, {}).get(role)
        if verdict is None:
            continue
        if verdict == "failed":
            failed = [r for r in profile.get("requirements", []) if statuses.get(r) == "failed"]
            parts.append(f"{pid} failed ({', '.join(failed)})")
        else:
            parts.append(f"{pid} {verdict}")
    return f"  profiles: {'; '.join(parts)}" if parts else ""
