//! TLS for server connections (rustls with the ring provider), configured by each URL's standard
//! options: PostgreSQL's `sslmode` / `sslrootcert` (libpq's meanings), MySQL's `ssl-mode` /
//! `ssl-ca` (the `mysql` client's meanings). The engine's sessions, its cancel path (PostgreSQL's
//! cancel request, MySQL's `KILL QUERY` connection) and `sqlgate load` all connect through here,
//! so they share one setting.
//!
//! Certificates are checked against the Mozilla roots (`webpki-roots`) or the given CA file where
//! the mode says so; `prefer` / `require` (`PREFERRED` / `REQUIRED`) encrypt without checking the
//! certificate, as their standard meanings say.

use super::CONNECT_TIMEOUT;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Nothing: the connection is encrypted but the server is not authenticated.
    Nothing,
    /// The certificate chains to a trusted root; the host name is not checked.
    Chain,
    /// The chain and the host name.
    Full,
}

/// PostgreSQL's `sslmode` values (libpq's; `allow` is refused: it tries clear text first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, unverified; clear text otherwise (libpq's default).
    Prefer,
    /// TLS or no connection, unverified (verify-ca when `sslrootcert` is given, as in libpq).
    Require,
    /// TLS, the chain checked.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

impl PgMode {
    fn parse(value: &str) -> Option<PgMode> {
        Some(match value {
            "disable" => PgMode::Disable,
            "prefer" => PgMode::Prefer,
            "require" => PgMode::Require,
            "verify-ca" => PgMode::VerifyCa,
            "verify-full" => PgMode::VerifyFull,
            _ => return None,
        })
    }

    /// The value as written in the URL.
    pub fn as_str(self) -> &'static str {
        match self {
            PgMode::Disable => "disable",
            PgMode::Prefer => "prefer",
            PgMode::Require => "require",
            PgMode::VerifyCa => "verify-ca",
            PgMode::VerifyFull => "verify-full",
        }
    }
}

/// A PostgreSQL URL's client settings with its TLS: the config (its `ssl_mode` set) and the
/// connector every connection and cancel request of it uses.
#[derive(Clone)]
pub struct PgTarget {
    /// The parsed URL without `sslmode` / `sslrootcert`.
    pub config: postgres::Config,
    /// The same for the asynchronous client the engine's sessions use.
    pub session_config: tokio_postgres::Config,
    /// The rustls connector for `config`.
    pub connector: tokio_postgres_rustls::MakeRustlsConnect,
    /// The URL's `sslmode` (`prefer` when absent).
    pub mode: PgMode,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTarget")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// Parses a PostgreSQL URL (`postgresql://...` or `key=value ...`) with its `sslmode` and
/// `sslrootcert`. The error names the option and never contains the URL.
pub fn postgres_target(url: &str) -> Result<PgTarget, String> {
    let (rest, options) = take_options(url, &["sslmode", "sslrootcert"]);
    let mode = match options.get("sslmode") {
        None => PgMode::Prefer,
        Some(value) => PgMode::parse(value).ok_or_else(|| {
            "`sslmode` must be disable, prefer, require, verify-ca or verify-full".to_string()
        })?,
    };
    let root = options.get("sslrootcert").map(PathBuf::from);
    let verify = match (mode, &root) {
        (PgMode::VerifyFull, _) => Verify::Full,
        (PgMode::VerifyCa, _) | (PgMode::Require, Some(_)) => Verify::Chain,
        _ => Verify::Nothing,
    };
    let mut config: postgres::Config = rest.parse().map_err(|_: postgres::Error| {
        "not a valid PostgreSQL URL (postgresql://user:password@host:port/database)".to_string()
    })?;
    config.ssl_mode(match mode {
        PgMode::Disable => postgres::config::SslMode::Disable,
        PgMode::Prefer => postgres::config::SslMode::Prefer,
        _ => postgres::config::SslMode::Require,
    });
    config.connect_timeout(CONNECT_TIMEOUT);
    let mut session_config: tokio_postgres::Config = rest.parse().map_err(|_| {
        "not a valid PostgreSQL URL (postgresql://user:password@host:port/database)".to_string()
    })?;
    session_config.ssl_mode(config.get_ssl_mode());
    session_config.connect_timeout(CONNECT_TIMEOUT);
    let root = root.filter(|path| path.as_os_str() != "system");
    let tls = client_config(verify, root.as_deref())?;
    Ok(PgTarget {
        config,
        session_config,
        connector: tokio_postgres_rustls::MakeRustlsConnect::new(tls),
        mode,
    })
}

/// MySQL's `ssl-mode` values (the `mysql` client's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MysqlMode {
    /// No TLS.
    Disabled,
    /// TLS when the server offers it, unverified; clear text otherwise (the client's default).
    Preferred,
    /// TLS or no connection, unverified.
    Required,
    /// TLS, the chain checked.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyIdentity,
}

impl MysqlMode {
    fn parse(value: &str) -> Option<MysqlMode> {
        Some(match value.to_ascii_uppercase().as_str() {
            "DISABLED" => MysqlMode::Disabled,
            "PREFERRED" => MysqlMode::Preferred,
            "REQUIRED" => MysqlMode::Required,
            "VERIFY_CA" => MysqlMode::VerifyCa,
            "VERIFY_IDENTITY" => MysqlMode::VerifyIdentity,
            _ => return None,
        })
    }

    /// The value as written in the URL.
    pub fn as_str(self) -> &'static str {
        match self {
            MysqlMode::Disabled => "DISABLED",
            MysqlMode::Preferred => "PREFERRED",
            MysqlMode::Required => "REQUIRED",
            MysqlMode::VerifyCa => "VERIFY_CA",
            MysqlMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }
}

/// A MySQL URL's options with its TLS settings.
#[derive(Debug, Clone)]
pub struct MysqlTarget {
    /// The options, `ssl_opts` set as the mode says (unset for DISABLED).
    pub opts: mysql::Opts,
    /// The URL's `ssl-mode` (`PREFERRED` when absent, `VERIFY_CA` when only `ssl-ca` is given).
    pub mode: MysqlMode,
}

/// Parses a `mysql://` URL with its `ssl-mode` and `ssl-ca` (also spelled `ssl_mode`,
/// `ssl_ca`). The `mysql` crate's own TLS options (`root_cert_path`, `danger_*`) are refused:
/// one way to say it. The error names the option and never contains the URL.
pub fn mysql_target(url: &str) -> Result<MysqlTarget, String> {
    install_provider();
    let (rest, options) = take_options(url, &["ssl-mode", "ssl_mode", "ssl-ca", "ssl_ca"]);
    let ca = options
        .get("ssl-ca")
        .or(options.get("ssl_ca"))
        .map(PathBuf::from);
    let mode = match options.get("ssl-mode").or(options.get("ssl_mode")) {
        Some(value) => MysqlMode::parse(value).ok_or_else(|| {
            "`ssl-mode` must be DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
                .to_string()
        })?,
        None if ca.is_some() => MysqlMode::VerifyCa,
        None => MysqlMode::Preferred,
    };
    let opts = mysql::Opts::from_url(&rest).map_err(|e| match e {
        mysql::UrlError::UnknownParameter(name) => format!("unknown URL option `{name}`"),
        _ => "not a valid MySQL URL (mysql://user:password@host:port/database)".to_string(),
    })?;
    if opts.get_ssl_opts().is_some() {
        return Err("the `mysql` crate's TLS options (`root_cert_path`, `danger_*`) are not accepted: use `ssl-mode` and `ssl-ca`".into());
    }
    let needs_tls = !matches!(mode, MysqlMode::Disabled | MysqlMode::Preferred);
    if needs_tls && opts.get_socket().is_some() {
        return Err(format!(
            "`ssl-mode={}` with `socket`: the `mysql` crate never encrypts a Unix socket connection; connect over TCP",
            mode.as_str()
        ));
    }
    if let Some(path) = &ca {
        read_roots(path)?;
    }
    let ssl = match mode {
        MysqlMode::Disabled => None,
        MysqlMode::Preferred | MysqlMode::Required => {
            Some(mysql::SslOpts::default().with_danger_accept_invalid_certs(true))
        }
        MysqlMode::VerifyCa => Some(
            mysql::SslOpts::default()
                .with_root_cert_path(ca)
                .with_danger_skip_domain_validation(true),
        ),
        MysqlMode::VerifyIdentity => Some(mysql::SslOpts::default().with_root_cert_path(ca)),
    };
    let opts = mysql::OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .prefer_socket(false)
        .ssl_opts(ssl)
        .into();
    Ok(MysqlTarget { opts, mode })
}

/// Opens a connection with `opts`; in `PREFERRED` mode a server without TLS gets a clear-text
/// connection, as the `mysql` client does.
/// Each attempt is counted as one of the run's own connections (`super::exclusive`).
pub fn mysql_connect(opts: mysql::Opts, mode: MysqlMode) -> Result<mysql::Conn, mysql::Error> {
    super::exclusive::opened();
    match mysql::Conn::new(opts.clone()) {
        Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported))
            if mode == MysqlMode::Preferred =>
        {
            super::exclusive::opened();
            mysql::Conn::new(mysql::OptsBuilder::from_opts(opts).ssl_opts(None))
        }
        result => result,
    }
}

/// An error's message followed by its causes' (`postgres::Error` shows only its kind, e.g.
/// "error performing TLS handshake", and keeps the reason in its source).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Makes ring the process's rustls provider (the dependency tree also builds aws-lc-rs, and
/// rustls picks no default when two are built).
fn install_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A rustls client configuration checking `verify` against the CA file `root` (the Mozilla
/// roots when none is given).
fn client_config(verify: Verify, root: Option<&Path>) -> Result<ClientConfig, String> {
    install_provider();
    let roots = match root {
        Some(path) => read_roots(path)?,
        None => RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        },
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("cannot use the CA certificates: {e}"))?;
    let verifier = Verifier { verify, webpki };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(config)
}

/// The CA certificates in the PEM file `path`.
fn read_roots(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let mut roots = RootCertStore::empty();
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read the CA file `{shown}`: {e}"))?;
    for certificate in certificates {
        let certificate =
            certificate.map_err(|e| format!("the CA file `{shown}` is not valid PEM: {e}"))?;
        roots
            .add(certificate)
            .map_err(|e| format!("the CA file `{shown}` holds an invalid certificate: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("the CA file `{shown}` holds no certificate"));
    }
    Ok(roots)
}

/// The webpki check, narrowed to what the mode asks.
#[derive(Debug)]
struct Verifier {
    verify: Verify,
    webpki: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self.verify == Verify::Nothing {
            return Ok(ServerCertVerified::assertion());
        }
        let checked = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match checked {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.verify == Verify::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Removes the options `names` from a URL's query string (`?a=1&b=2`) or a `key=value`
/// connection string, returning the rest and the removed options' (percent-decoded) values.
fn take_options(url: &str, names: &[&str]) -> (String, std::collections::BTreeMap<String, String>) {
    let mut taken = std::collections::BTreeMap::new();
    if !url.contains("://") {
        let Some(settings) = key_value_settings(url) else {
            return (url.to_string(), taken);
        };
        let kept: Vec<&str> = settings
            .into_iter()
            .filter_map(|setting| {
                if names.contains(&setting.key.as_str()) {
                    taken.insert(setting.key, setting.value);
                    return None;
                }
                Some(&url[setting.span])
            })
            .collect();
        return (kept.join(" "), taken);
    }
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), taken);
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if names.contains(&key) {
                taken.insert(key.to_string(), super::percent_decode(value));
                return false;
            }
            true
        })
        .collect();
    match kept.is_empty() {
        true => (base.to_string(), taken),
        false => (format!("{base}?{}", kept.join("&")), taken),
    }
}

/// One `keyword = value` setting of a libpq key=value connection string.
struct Setting {
    /// The keyword.
    key: String,
    /// The value, quotes removed and backslash escapes resolved.
    value: String,
    /// Where the whole setting stands in the string, so the others are kept as written.
    span: std::ops::Range<usize>,
}

/// The settings of a libpq key=value string (`host=h password='a b' sslrootcert='/my ca.pem'`):
/// spaces around `=` are optional, a value with spaces is single-quoted, and `\'` / `\\`
/// escape a quote or a backslash. `None` when the string does not follow that syntax (then it is
/// passed on unchanged and the client library reports it).
fn key_value_settings(text: &str) -> Option<Vec<Setting>> {
    let mut settings = Vec::new();
    let mut chars = text.char_indices().peekable();
    let skip_spaces = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_spaces(&mut chars);
        let Some(&(start, _)) = chars.peek() else {
            return Some(settings);
        };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        skip_spaces(&mut chars);
        if key.is_empty() || chars.next().map(|(_, c)| c) != Some('=') {
            return None;
        }
        skip_spaces(&mut chars);
        let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
        let mut value = String::new();
        let mut closed = !quoted;
        while let Some(&(_, c)) = chars.peek() {
            if !quoted && c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '\\' => value.push(chars.next()?.1),
                '\'' if quoted => {
                    closed = true;
                    break;
                }
                c => value.push(c),
            }
        }
        if !closed {
            return None;
        }
        let end = chars.peek().map_or(text.len(), |(i, _)| *i);
        settings.push(Setting {
            key,
            value,
            span: start..end,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_taken_from_urls_and_key_value_strings() {
        let (rest, taken) = take_options(
            "postgresql://u:p@h/db?sslmode=verify-full&application_name=x&sslrootcert=%2Ftmp%2Fca.pem",
            &["sslmode", "sslrootcert"],
        );
        assert_eq!(rest, "postgresql://u:p@h/db?application_name=x");
        assert_eq!(taken["sslmode"], "verify-full");
        assert_eq!(taken["sslrootcert"], "/tmp/ca.pem");
        let (rest, taken) = take_options("host=h user=u sslmode=require", &["sslmode"]);
        assert_eq!(rest, "host=h user=u");
        assert_eq!(taken["sslmode"], "require");
    }

    #[test]
    fn quoted_key_value_settings_keep_their_spaces_and_escapes() {
        let (rest, taken) = take_options(
            r"host = h password='two  spaces \' quote' sslrootcert = '/my certs/ca.pem' sslmode=verify-full",
            &["sslmode", "sslrootcert"],
        );
        assert_eq!(rest, r"host = h password='two  spaces \' quote'");
        assert_eq!(taken["sslrootcert"], "/my certs/ca.pem");
        assert_eq!(taken["sslmode"], "verify-full");
        let settings = key_value_settings(r"a=\\x b='' c='it\'s'").unwrap();
        let values: Vec<(&str, &str)> = settings
            .iter()
            .map(|s| (s.key.as_str(), s.value.as_str()))
            .collect();
        assert_eq!(values, [("a", r"\x"), ("b", ""), ("c", "it's")]);
        for malformed in ["host", "host=h =x", "password='open", r"a=\"] {
            assert!(key_value_settings(malformed).is_none(), "{malformed}");
            assert_eq!(take_options(malformed, &["sslmode"]).0, malformed);
        }
    }

    #[test]
    fn modes_map_to_the_standard_meanings() {
        let target = postgres_target("postgresql://u:p@h/db").unwrap();
        assert_eq!(target.mode, PgMode::Prefer);
        assert_eq!(
            target.config.get_ssl_mode(),
            postgres::config::SslMode::Prefer
        );
        let target = postgres_target("postgresql://u:p@h/db?sslmode=verify-ca").unwrap();
        assert_eq!(
            target.config.get_ssl_mode(),
            postgres::config::SslMode::Require
        );
        let error = postgres_target("postgresql://u:secret9@h/db?sslmode=allow").unwrap_err();
        assert!(
            error.contains("`sslmode`") && !error.contains("secret9"),
            "{error}"
        );
        let target = mysql_target("mysql://u:p@h/db").unwrap();
        assert_eq!(target.mode, MysqlMode::Preferred);
        let target = mysql_target("mysql://u:p@h/db?ssl-mode=disabled").unwrap();
        assert!(target.opts.get_ssl_opts().is_none());
        let error = mysql_target("mysql://u:p@h/db?ssl-mode=verify_ca&ssl-ca=/nonexistent/ca.pem")
            .unwrap_err();
        assert!(error.contains("/nonexistent/ca.pem"), "{error}");
        let error =
            mysql_target("mysql://u:p@h/db?ssl-mode=REQUIRED&socket=/run/mysqld.sock").unwrap_err();
        assert!(error.contains("socket"), "{error}");
        let error = mysql_target("mysql://u:secret9@h/db?root_cert_path=/x").unwrap_err();
        assert!(
            error.contains("ssl-ca") && !error.contains("secret9"),
            "{error}"
        );
    }
}
