"""TLS contexts with full X.509 verification (strict flags on, hostname checked)."""

from __future__ import annotations

import ssl

from .record import record


@record
class TlsFiles:
    """Certificate material for one side of a TLS connection."""

    ca_file: str | None = None  # client: trust anchor; server: client-certificate CA
    cert_file: str | None = None
    key_file: str | None = None


def _harden(context: ssl.SSLContext) -> ssl.SSLContext:
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


def server_context(files: TlsFiles) -> ssl.SSLContext:
    """Serve ``files.cert_file``; require client certificates iff a client CA is set."""
    context = _harden(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    assert files.cert_file is not None and files.key_file is not None
    context.load_cert_chain(files.cert_file, files.key_file)
    if files.ca_file is not None:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=files.ca_file)
    return context


def client_context(files: TlsFiles) -> ssl.SSLContext:
    """Verify the server chain against ``files.ca_file`` (else the system store)
    and its name."""
    context = _harden(ssl.create_default_context(cafile=files.ca_file))
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    if files.cert_file is not None:
        context.load_cert_chain(files.cert_file, files.key_file)
    return context
