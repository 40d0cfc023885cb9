//! TLS to Postgres, as libpq's `sslmode` and `sslrootcert` ask. The test server
//! (`scripts/pg.sh`: Postgres from PyPI) is built without TLS, so this test puts a TLS front
//! of its own before it: a proxy that speaks Postgres's TLS negotiation (an SSLRequest
//! answered `S`, then a handshake with a certificate for 127.0.0.1 and localhost that openssl
//! makes here, signed by a CA made here) and passes the decrypted bytes on to the server. A client that does not ask
//! for TLS is turned away, so a store that opens through the front was reached over TLS.

mod common;

use common::*;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Postgres's SSLRequest: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// A TLS front for the Postgres server at `upstream`, listening on `port`.
struct Front {
    port: u16,
    /// The CA certificate its certificate is signed by.
    certificate: PathBuf,
    _dir: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

fn tls_front(upstream: SocketAddr) -> Front {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let (ca, cert, key) = (at("ca.crt"), at("server.crt"), at("server.key"));
    std::fs::write(
        at("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    // A CA of its own, and the front's certificate signed by it.
    let openssl = |args: &[&str]| {
        let made = std::process::Command::new("openssl")
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("openssl (the TLS test makes its certificates with it)");
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
    };
    openssl(
        &[
            "req",
            "-x509",
            "-new",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=Somna test CA",
        ]
        .into_iter()
        .chain(["-keyout", "ca.key", "-out", "ca.crt"])
        .collect::<Vec<_>>(),
    );
    openssl(
        &[
            "req",
            "-new",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
        ]
        .into_iter()
        .chain(["-out", "server.csr"])
        .collect::<Vec<_>>(),
    );
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
        ]
        .into_iter()
        .chain([
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ])
        .collect::<Vec<_>>(),
    );
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, PrivateKeyDer::from_pem_file(&key).unwrap())
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    runtime.spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let mut first = [0u8; 8];
                if client.read_exact(&mut first).await.is_err() || first != SSL_REQUEST {
                    return; // No TLS asked for: turned away.
                }
                if client.write_all(b"S").await.is_err() {
                    return;
                }
                let Ok(mut tls) = acceptor.accept(client).await else {
                    return;
                };
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut server).await;
            });
        }
    });
    Front {
        port,
        certificate: ca,
        _dir: dir,
        _runtime: runtime,
    }
}

/// `url` with its `host:port` and the rest split out: (before, host:port, after).
fn split_address(url: &str) -> (&str, &str, &str) {
    let at = url.find('@').expect("a URL with user@host") + 1;
    let end = at + url[at..].find('/').expect("a URL with a database");
    (&url[..at], &url[at..end], &url[end..])
}

/// `somna stats` on `url`, with a home of its own (no `~/.postgresql/root.crt`).
fn stats(home: &Path, url: &str) -> std::process::Output {
    somna(Path::new(url))
        .env("HOME", home)
        .env("SOMNA_HOME", home)
        .env("SOMNA_MODEL_DIR", somna_engine::paths::model_dir())
        .arg("stats")
        .output()
        .unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_store_opens_over_tls_as_sslmode_asks_and_a_refused_certificate_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let store = postgres_store();
    let (before, address, after) = split_address(&store);
    let front = tls_front(address.parse().expect("the test server at IP:port"));
    let through = format!("{before}127.0.0.1:{}{after}", front.port);
    let with = |params: &str| format!("{through}&{params}");

    // Without TLS the front turns the client away.
    let out = stats(home, &with("sslmode=disable"));
    assert!(!out.status.success(), "opened without TLS");

    // Encrypted, the certificate not checked (libpq's require), and the default (prefer).
    ok(stats(home, &with("sslmode=require")));
    ok(stats(home, &through));

    // Checked against the front's own certificate: the chain, and the host name too.
    let root = format!("sslrootcert={}", front.certificate.display());
    ok(stats(home, &with(&format!("sslmode=verify-ca&{root}"))));
    ok(stats(home, &with(&format!("sslmode=verify-full&{root}"))));

    // Checked against the public roots, which a self-signed certificate is not under.
    let out = stats(home, &with("sslmode=verify-full"));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("certificate") && err.contains("sslrootcert"),
        "{err}"
    );
    assert!(
        !err.contains("somna-test"),
        "the password is never printed: {err}"
    );

    // A root certificate file that is not there.
    let out = stats(
        home,
        &with("sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("/nonexistent/ca.pem"),
        "{}",
        stderr(&out)
    );

    // A mode Postgres does not have.
    let out = stats(home, &with("sslmode=sometimes"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("sslmode=sometimes"),
        "{}",
        stderr(&out)
    );
}
