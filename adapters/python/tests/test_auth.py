"""Server-side token checks: headers, signatures, pinned algorithms, claims."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pki import CLOCK, Pki, make_pki, sign_token

from ahp_py.contract.config import ConfigError, Fields, server_auth, server_policy
from ahp_py.sdk.auth import Authenticator

HS_KEY = "compat-signing-key-for-tests-only-0123456789"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def authenticator(auth: dict[str, Any], tls: dict[str, Any] | None = None) -> Authenticator:
    config: dict[str, Any] = {"auth": auth}
    if tls is not None:
        config["tls"] = tls
    return Authenticator(server_policy(Fields(config, "/cfg/server.json")))


def strict_oauth(pki: Pki, **extra: Any) -> Authenticator:
    return authenticator(
        {
            "mode": "oauth",
            "profile": "strict",
            "publicKeyFile": str(pki.token_public),
            "issuer": "https://issuer.test",
            "audience": "ahp-backend",
            "purpose": "oauth",
            "clock": CLOCK,
            **extra,
        }
    )


def bearer(token: str) -> list[str]:
    return [f"Bearer {token}"]


def test_bearer_mode_header_discipline() -> None:
    auth = authenticator({"mode": "bearer", "token": "s3cret"})
    assert auth.accepts(bearer("s3cret"))
    assert not auth.accepts([])
    assert not auth.accepts(bearer("s3cret") * 2)
    assert auth.accepts(["bearer s3cret"])  # the scheme is case-insensitive (RFC 7235)
    assert auth.accepts(["BEARER  s3cret"])  # one or more spaces (RFC 6750)
    assert not auth.accepts(["Bearer s3cret, Bearer s3cret"])
    assert not auth.accepts(["Bearer s3cret s3cret"])
    assert not auth.accepts(["Basic s3cret"])
    assert not auth.accepts(bearer("wrong"))
    assert not auth.accepts(["Bearer "])


def test_none_and_mtls_modes_ignore_headers() -> None:
    assert authenticator({"mode": "none"}).accepts([])
    assert authenticator({"mode": "mtls"}).accepts(["Bearer x", "Bearer y"])


def test_strict_es256_token_accepted(pki: Pki) -> None:
    assert strict_oauth(pki).accepts(bearer(sign_token(pki.token_private)))


@pytest.mark.parametrize(
    "claims",
    [
        {"iss": "https://other.test"},
        {"aud": "someone-else"},
        {"purpose": "workload"},
        {"purpose": None},
        {"sub": ""},
        {"sub": None},
        {"exp": CLOCK},
        {"exp": CLOCK - 1},
        {"exp": None},
        {"iat": CLOCK + 1},
        {"iat": None},
        {"exp": True},
    ],
)
def test_strict_claim_checks(pki: Pki, claims: dict[str, Any]) -> None:
    assert not strict_oauth(pki).accepts(bearer(sign_token(pki.token_private, **claims)))


def test_audience_list_and_iat_equal_to_clock(pki: Pki) -> None:
    token = sign_token(pki.token_private, aud=["x", "ahp-backend"], iat=CLOCK)
    assert strict_oauth(pki).accepts(bearer(token))


def test_strict_rejects_wrong_key_and_hs256(pki: Pki) -> None:
    auth = strict_oauth(pki)
    assert not auth.accepts(bearer(sign_token(pki.wrong_token_private)))
    assert not auth.accepts(bearer(sign_token(HS_KEY, algorithm="HS256")))
    assert not auth.accepts(bearer("not.a.jwt"))


def test_compat_hs256_only(pki: Pki) -> None:
    auth = authenticator(
        {
            "mode": "workload",
            "profile": "compat",
            "signingKey": HS_KEY,
            "issuer": "https://issuer.test",
            "audience": "ahp-backend",
            "purpose": "workload",
            "clock": CLOCK,
        }
    )
    assert auth.accepts(bearer(sign_token(HS_KEY, algorithm="HS256", purpose="workload")))
    assert not auth.accepts(bearer(sign_token(HS_KEY, algorithm="HS256", purpose="oauth")))
    assert not auth.accepts(bearer(sign_token(pki.token_private, purpose="workload")))
    assert not auth.accepts(
        bearer(
            sign_token(
                "another-key-of-enough-length-000000",
                algorithm="HS256",
                purpose="workload",
            )
        )
    )


def test_public_key_must_be_p256(tmp_path: Path) -> None:
    bad = tmp_path / "key.pem"
    bad.write_text("not a key")
    with pytest.raises(ConfigError) as caught:
        authenticator(
            {
                "mode": "oauth",
                "publicKeyFile": str(bad),
                "issuer": "i",
                "audience": "a",
                "clock": CLOCK,
            }
        )
    assert caught.value.file == "/cfg/server.json"
    assert caught.value.field == "auth.publicKeyFile"


def test_strict_server_needs_tls_for_token_modes() -> None:
    with pytest.raises(ConfigError) as caught:
        server_auth(Fields({"auth": {"mode": "bearer", "token": "t"}}, "/cfg/server.json"))
    assert caught.value.field == "tls"
    settings = server_auth(
        Fields({"auth": {"mode": "bearer", "profile": "compat", "token": "t"}}, "/s.json")
    )
    assert settings.tls is None


@pytest.mark.parametrize(
    ("auth", "field"),
    [
        ({"mode": "bearer", "profile": "compat"}, "auth.token"),
        ({"mode": "bearer", "profile": "compat", "token": ""}, "auth.token"),
        ({"mode": "kerberos"}, "auth.mode"),
        ({"mode": "none", "profile": "lax"}, "auth.profile"),
        ({"mode": "workload", "profile": "compat", "signingKey": "k"}, "auth.issuer"),
        (
            {
                "mode": "oauth",
                "profile": "compat",
                "signingKey": "k",
                "issuer": "i",
                "audience": "a",
                "clock": "now",
            },
            "auth.clock",
        ),
    ],
)
def test_server_auth_errors_name_the_field(auth: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        server_policy(Fields({"auth": auth}, "/cfg/server.json"))
    assert caught.value.field == field
    assert str(caught.value).startswith(f"/cfg/server.json: field {field}: ")
