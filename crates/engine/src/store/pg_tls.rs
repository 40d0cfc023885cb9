//! TLS to a Postgres server, as libpq's `sslmode` and `sslrootcert` ask (rustls with the
//! ring provider, through `tokio-postgres-rustls`). Managed Postgres services require TLS.
//!
//! - `disable`: no TLS.
//! - `prefer` (the default) and `require`: TLS when the server offers it (`require`: or no
//!   connection), the server's certificate not checked: the traffic is encrypted but an
//!   attacker who can answer in the server's place is not detected, as with libpq. Given an
//!   `sslrootcert`, `require` checks the chain as `verify-ca` does (libpq's rule).
//! - `verify-ca`: TLS, the certificate chain checked against the roots.
//! - `verify-full`: also that the certificate names the host connected to.
//!
//! The roots: the PEM file `sslrootcert` names; `sslrootcert=system`, or no `sslrootcert` and
//! no `~/.postgresql/root.crt`, the Mozilla roots (webpki-roots), which the certificates of
//! most managed services chain to; else `~/.postgresql/root.crt`, libpq's default.
//!
//! The postgres crate itself reads `sslmode` only up to `require`, and no `sslrootcert`: both
//! are taken out of the URL here before it parses the rest.

use crate::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Nothing: encryption only.
    Nothing,
    /// The chain, up to one of the roots.
    Chain,
    /// The chain and the host name.
    Full,
}

/// A Postgres URL split into what the postgres crate parses and the TLS it asks for.
#[derive(Debug)]
pub(super) struct TlsUrl {
    /// The URL without `sslrootcert`, and with `sslmode` as the postgres crate reads it.
    pub url: String,
    check: Check,
    root_cert: Option<String>,
}

impl TlsUrl {
    /// Reads `sslmode` and `sslrootcert` from `url`'s query.
    pub fn parse(url: &str) -> Result<Self> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        // Every other parameter is passed on as written.
        let mut kept = Vec::new();
        let mut mode = None;
        let mut root_cert = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decoded = || {
                percent_encoding::percent_decode_str(value)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            match key {
                "sslmode" => mode = Some(decoded()),
                "sslrootcert" => root_cert = Some(decoded()),
                _ => kept.push(pair.to_string()),
            }
        }
        let (crate_mode, check) = match mode.as_deref() {
            None | Some("prefer") | Some("allow") => ("prefer", Check::Nothing),
            Some("disable") => ("disable", Check::Nothing),
            Some("require") if root_cert.is_some() => ("require", Check::Chain),
            Some("require") => ("require", Check::Nothing),
            Some("verify-ca") => ("require", Check::Chain),
            Some("verify-full") => ("require", Check::Full),
            Some(other) => {
                return Err(Error::StoreUnavailable {
                    store: "(a postgres:// URL)".into(),
                    reason: format!("sslmode={other} is not a mode Postgres knows"),
                    fix: "Use sslmode=disable, prefer, require, verify-ca or verify-full".into(),
                })
            }
        };
        kept.push(format!("sslmode={crate_mode}"));
        let query = kept.join("&");
        Ok(Self {
            url: format!("{base}?{query}"),
            check,
            root_cert,
        })
    }

    /// The connector for these settings.
    pub fn connector(&self, shown: &str) -> Result<MakeRustlsConnect> {
        let unavailable = |reason: String, fix: &str| Error::StoreUnavailable {
            store: shown.to_string(),
            reason,
            fix: fix.into(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Internal(format!("TLS set-up: {e}")))?;
        let chain = match self.check {
            Check::Nothing => None,
            Check::Chain | Check::Full => {
                let roots = Arc::new(self.roots().map_err(|reason| {
                    unavailable(
                        reason,
                        "Give sslrootcert=<the server's CA certificate, PEM> in the URL",
                    )
                })?);
                Some(
                    WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                        .build()
                        .map_err(|e| Error::Internal(format!("TLS set-up: {e}")))?,
                )
            }
        };
        let config = match chain {
            Some(verifier) if self.check == Check::Full => {
                builder.with_webpki_verifier(verifier).with_no_client_auth()
            }
            chain => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Partial { chain, provider }))
                .with_no_client_auth(),
        };
        Ok(MakeRustlsConnect::new(config))
    }

    /// The roots certificates are checked against (see the module's note).
    fn roots(&self) -> std::result::Result<RootCertStore, String> {
        let file = match self.root_cert.as_deref() {
            Some("system") => None,
            Some(path) => Some(PathBuf::from(path)),
            None => dirs::home_dir()
                .map(|h| h.join(".postgresql").join("root.crt"))
                .filter(|p| p.exists()),
        };
        let mut roots = RootCertStore::empty();
        let Some(file) = file else {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            return Ok(roots);
        };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&file)
            .and_then(|certs| certs.collect())
            .map_err(|e| format!("cannot read the certificates in {} ({e})", file.display()))?;
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(format!("{} holds no usable certificate", file.display()));
        }
        Ok(roots)
    }
}

/// What a failed TLS handshake means to the person who asked, if `e` is one.
pub(super) fn explain(e: &postgres::Error) -> Option<(String, &'static str)> {
    let mut cause: &dyn std::error::Error = e;
    loop {
        // The TLS stream reports rustls's error inside an I/O error, whose `source` skips it.
        let inner = cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if let Some(tls) = inner.or_else(|| cause.downcast_ref::<rustls::Error>()) {
            return Some(match tls {
                rustls::Error::InvalidCertificate(c) => (
                    format!("the server's TLS certificate was not accepted ({c:?})"),
                    "Give its CA in sslrootcert=<PEM file>, or use sslmode=require to encrypt without checking it",
                ),
                other => (
                    format!("the TLS handshake failed ({other})"),
                    "Check the server's TLS settings, or use sslmode=disable on a trusted network",
                ),
            });
        }
        let text = cause.to_string();
        if text.contains("server does not support TLS") {
            return Some((
                "the server does not offer TLS and the URL requires it".into(),
                "Turn on ssl in the server's postgresql.conf, or drop sslmode=require",
            ));
        }
        cause = cause.source()?;
    }
}

/// Checks what `sslmode` asks below `verify-full`: with `chain` (`verify-ca`), the
/// certificate chain but not the host name; without (`prefer`, `require`), nothing. Either
/// way the server must prove it holds the certificate's key.
#[derive(Debug)]
struct Partial {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Partial {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_read_and_the_rest_passed_on() {
        let t = TlsUrl::parse(
            "postgres://u:p@h:5/db?options=-c%20search_path%3Ds%2Cpublic&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem",
        )
        .unwrap();
        assert_eq!(t.check, Check::Full);
        assert_eq!(t.root_cert.as_deref(), Some("/tmp/ca.pem"));
        assert_eq!(
            t.url,
            "postgres://u:p@h:5/db?options=-c%20search_path%3Ds%2Cpublic&sslmode=require"
        );
        assert!(t.url.parse::<postgres::Config>().is_ok());

        let plain = TlsUrl::parse("postgres://u@h/db").unwrap();
        assert_eq!(
            (plain.check, plain.url.as_str()),
            (Check::Nothing, "postgres://u@h/db?sslmode=prefer")
        );
        assert_eq!(
            TlsUrl::parse("postgres://u@h/db?sslmode=verify-ca")
                .unwrap()
                .check,
            Check::Chain
        );
        // libpq: require with a root certificate checks the chain.
        let require = TlsUrl::parse("postgres://u@h/db?sslmode=require&sslrootcert=x.pem").unwrap();
        assert_eq!(require.check, Check::Chain);
        assert!(matches!(
            TlsUrl::parse("postgres://u@h/db?sslmode=sometimes"),
            Err(Error::StoreUnavailable { .. })
        ));
    }

    #[test]
    fn a_missing_root_certificate_file_is_a_clear_error() {
        let t =
            TlsUrl::parse("postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
                .unwrap();
        let Err(Error::StoreUnavailable { reason, fix, .. }) =
            t.connector("postgres://u@h:5432/db")
        else {
            panic!("expected a typed error");
        };
        assert!(reason.contains("/nonexistent/ca.pem"), "{reason}");
        assert!(fix.contains("sslrootcert"), "{fix}");
    }
}
