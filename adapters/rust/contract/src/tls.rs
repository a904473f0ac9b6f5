//! TLS configs (rustls, ring): servers present the run's certificate and, with a
//! client CA, require a client certificate chaining to it; clients verify the
//! chain against the run's CA only (no system roots) and the host name.

use std::fs::File;
use std::io::BufReader;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use crate::config::TlsFiles;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

const VERSIONS: &[&rustls::SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

/// Every certificate of a PEM file.
pub fn certs(file: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let f = File::open(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let list: Vec<_> = rustls_pemfile::certs(&mut BufReader::new(f))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{file}: not PEM: {e}"))?;
    if list.is_empty() {
        return Err(format!("no PEM certificate in {file}"));
    }
    Ok(list)
}

/// The private key of a PEM file (PKCS#8, SEC1 or PKCS#1).
pub fn key(file: &str) -> Result<PrivateKeyDer<'static>, String> {
    let f = File::open(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    rustls_pemfile::private_key(&mut BufReader::new(f))
        .map_err(|e| format!("{file}: not PEM: {e}"))?
        .ok_or_else(|| format!("no PEM private key in {file}"))
}

fn roots(file: &str) -> Result<Arc<RootCertStore>, String> {
    let mut store = RootCertStore::empty();
    for c in certs(file)? {
        store
            .add(c)
            .map_err(|e| format!("{file}: unusable CA certificate: {e}"))?;
    }
    Ok(Arc::new(store))
}

/// The listener's config: the certificate and key; client certificates
/// required iff a client CA is given.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, String> {
    let cert_file = files.cert_file.as_deref().ok_or("no certFile")?;
    let key_file = files.key_file.as_deref().ok_or("no keyFile")?;
    let chain = certs(cert_file)?;
    let private = key(key_file)?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(VERSIONS)
        .map_err(|e| e.to_string())?;
    let builder = match &files.ca_file {
        Some(ca) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(roots(ca)?, provider())
                .build()
                .map_err(|e| format!("unusable client CA {ca}: {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    // no ALPN: a client offering none, or others, is served HTTP/1.1 all the same
    let cfg = builder
        .with_single_cert(chain, private)
        .map_err(|e| format!("unusable certificate material: {e}"))?;
    Ok(Arc::new(cfg))
}

/// A client's config: the server's chain verified against `ca_file` (no system
/// roots: without one nothing verifies), a client certificate when given.
pub fn client_config(files: &TlsFiles) -> Result<Arc<ClientConfig>, String> {
    let store = match &files.ca_file {
        Some(ca) => roots(ca)?,
        None => Arc::new(RootCertStore::empty()),
    };
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(VERSIONS)
        .map_err(|e| e.to_string())?;
    let verifier = if store.is_empty() {
        None
    } else {
        Some(
            WebPkiServerVerifier::builder_with_provider(store, provider())
                .build()
                .map_err(|e| format!("unusable CA: {e}"))?,
        )
    };
    let builder = match verifier {
        Some(v) => builder.with_webpki_verifier(v),
        None => builder.with_root_certificates(RootCertStore::empty()),
    };
    let mut cfg = match (&files.cert_file, &files.key_file) {
        (Some(c), Some(k)) => builder
            .with_client_auth_cert(certs(c)?, key(k)?)
            .map_err(|e| format!("unusable client certificate: {e}"))?,
        _ => builder.with_no_client_auth(),
    };
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}
