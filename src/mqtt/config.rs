//! The `[mqtt]` section of the daemon's and the hall's configuration:
//!
//! ```toml
//! [mqtt]
//! url = "mqtt://broker.local:1883"       # mqtt://host[:port] (1883 when not given)
//! hall = "spring-open"                   # the first level of the topic tree below boardwatch/
//! credentials_file = "/etc/boardwatch/mqtt-credentials"   # one line: user:password (optional)
//! # client_id = "boardwatch-camera-pc-1" # default: boardwatch-{hall}-{first board} (daemon), boardwatch-hall-{hall}
//! ```
//!
//! A broker over TLS (`mqtts://`, port 8883 when not given) needs the certificate of the
//! authority that signed the broker's (PEM); a broker that asks for client certificates gets
//! one with its key:
//!
//! ```toml
//! [mqtt]
//! url = "mqtts://broker.local:8883"
//! hall = "spring-open"
//! ca_file = "/etc/boardwatch/mqtt-ca.pem"            # or /etc/ssl/certs/ca-certificates.crt
//! client_cert_file = "/etc/boardwatch/camera-pc-1.pem" # optional, with client_key_file
//! client_key_file = "/etc/boardwatch/camera-pc-1.key"
//! ```
//!
//! The files are read and checked with the configuration: a missing or malformed one is an
//! error naming the key and the file, not a failed connection later.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use serde::Deserialize;

/// The section as written.
#[derive(Deserialize, Default, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawMqtt {
    pub url: Option<String>,
    pub hall: Option<String>,
    pub credentials_file: Option<PathBuf>,
    pub client_id: Option<String>,
    pub ca_file: Option<PathBuf>,
    pub client_cert_file: Option<PathBuf>,
    pub client_key_file: Option<PathBuf>,
}

/// TLS to the broker: the files it was read from and the client configuration built from them.
#[derive(Clone)]
pub struct MqttTls {
    pub ca_file: PathBuf,
    pub client_cert_file: Option<PathBuf>,
    pub config: Arc<rustls::ClientConfig>,
}

impl PartialEq for MqttTls {
    // The same files make the same configuration.
    fn eq(&self, other: &MqttTls) -> bool {
        (&self.ca_file, &self.client_cert_file) == (&other.ca_file, &other.client_cert_file)
    }
}

#[derive(Clone, PartialEq)]
pub struct MqttConfig {
    pub host: String,
    pub port: u16,
    pub hall: String,
    /// User and password, read from `credentials_file`.
    pub credentials: Option<(String, String)>,
    pub client_id: Option<String>,
    /// Set for `mqtts://` brokers.
    pub tls: Option<MqttTls>,
}

impl std::fmt::Debug for MqttConfig {
    // The password stays out of logs and panics.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MqttConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("hall", &self.hall)
            .field(
                "credentials",
                &self
                    .credentials
                    .as_ref()
                    .map(|(user, _)| format!("{user}:<set>")),
            )
            .field("client_id", &self.client_id)
            .field("tls_ca_file", &self.tls.as_ref().map(|t| &t.ca_file))
            .finish()
    }
}

/// A name usable as one level of a topic (and a folder): letters, digits, `-`, `_`, `.`.
pub fn valid_topic_level(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl MqttConfig {
    /// Check the section; errors are (key below `mqtt.`, message). `resolve` makes relative
    /// paths relative to the configuration's folder.
    pub fn check(
        raw: RawMqtt,
        resolve: &dyn Fn(PathBuf) -> PathBuf,
    ) -> Result<MqttConfig, Vec<(String, String)>> {
        let mut errors = Vec::new();
        let mut error = |key: &str, message: String| errors.push((format!("mqtt.{key}"), message));
        let (mut host, mut port, mut secure) = (String::new(), 1883, false);
        match raw.url.as_deref() {
            None => error(
                "url",
                "missing: the broker, like \"mqtt://127.0.0.1:1883\"".into(),
            ),
            Some(url) => match parse_url(url) {
                Ok(broker) => (host, port, secure) = broker,
                Err(message) => error("url", format!("{url:?}: {message}")),
            },
        }
        let tls = match (secure, raw.ca_file.map(&resolve)) {
            (true, Some(ca_file)) => {
                let client = match (
                    raw.client_cert_file.map(&resolve),
                    raw.client_key_file.map(&resolve),
                ) {
                    (Some(cert), Some(key)) => Some((cert, key)),
                    (None, None) => None,
                    (Some(_), None) => {
                        error(
                            "client_key_file",
                            "missing: client_cert_file needs the certificate's private key (PEM)"
                                .into(),
                        );
                        None
                    }
                    (None, Some(_)) => {
                        error(
                            "client_cert_file",
                            "missing: client_key_file needs its certificate (PEM)".into(),
                        );
                        None
                    }
                };
                match tls_client_config(&ca_file, client.as_ref()) {
                    Ok(config) => Some(MqttTls {
                        ca_file,
                        client_cert_file: client.map(|(cert, _)| cert),
                        config: Arc::new(config),
                    }),
                    Err((key, message)) => {
                        error(key, message);
                        None
                    }
                }
            }
            (true, None) => {
                error("ca_file", "missing: an mqtts:// broker needs the certificate (PEM) of the authority that signed the broker's (the system's authorities: /etc/ssl/certs/ca-certificates.crt)".into());
                None
            }
            (false, ca_file) => {
                let given = [
                    ("ca_file", ca_file.is_some()),
                    ("client_cert_file", raw.client_cert_file.is_some()),
                    ("client_key_file", raw.client_key_file.is_some()),
                ];
                for (key, _) in given.iter().filter(|(_, given)| *given) {
                    if !host.is_empty() {
                        error(
                            key,
                            "given for a broker without TLS: write the url as mqtts://host[:port]"
                                .into(),
                        );
                    }
                }
                None
            }
        };
        let hall = raw.hall.unwrap_or_default();
        if !valid_topic_level(&hall) {
            error(
                "hall",
                format!("{hall:?}: give the hall's name in letters, digits, -, _ or ."),
            );
        }
        let credentials =
            raw.credentials_file
                .map(resolve)
                .and_then(|path| match read_credentials(&path) {
                    Ok(c) => Some(c),
                    Err(message) => {
                        error("credentials_file", format!("{}: {message}", path.display()));
                        None
                    }
                });
        if errors.is_empty() {
            Ok(MqttConfig {
                host,
                port,
                hall,
                credentials,
                client_id: raw.client_id,
                tls,
            })
        } else {
            Err(errors)
        }
    }

    /// The client's options; `default_id` unless `client_id` is set.
    pub fn options(&self, default_id: &str) -> rumqttc::MqttOptions {
        let id = self
            .client_id
            .clone()
            .unwrap_or_else(|| default_id.to_string());
        let mut options = rumqttc::MqttOptions::new(id, &self.host, self.port);
        options.set_keep_alive(Duration::from_secs(10));
        options.set_clean_session(true);
        options.set_max_packet_size(4 << 20, 4 << 20);
        if let Some((user, password)) = &self.credentials {
            options.set_credentials(user, password);
        }
        if let Some(tls) = &self.tls {
            options.set_transport(rumqttc::Transport::tls_with_config(
                rumqttc::TlsConfiguration::Rustls(tls.config.clone()),
            ));
        }
        options
    }
}

/// `mqtt://host[:port]` or, over TLS, `mqtts://host[:port]`: host, port, TLS.
fn parse_url(url: &str) -> Result<(String, u16, bool), String> {
    let (rest, secure) = if let Some(rest) = url
        .strip_prefix("mqtt://")
        .or_else(|| url.strip_prefix("tcp://"))
    {
        (rest, false)
    } else if let Some(rest) = url
        .strip_prefix("mqtts://")
        .or_else(|| url.strip_prefix("ssl://"))
    {
        (rest, true)
    } else {
        return Err("expected mqtt://host[:port] or mqtts://host[:port]".into());
    };
    let rest = rest.trim_end_matches('/');
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (
            host,
            port.parse::<u16>()
                .map_err(|_| format!("port {port:?} is not a number"))?,
        ),
        None => (rest, if secure { 8883 } else { 1883 }),
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok((host.to_string(), port, secure))
}

/// The TLS client configuration: the broker's certificate must chain to one in `ca_file`;
/// `client` is a certificate and key to show the broker. Errors: (key below `mqtt.`, message
/// naming the file).
fn tls_client_config(
    ca_file: &Path,
    client: Option<&(PathBuf, PathBuf)>,
) -> Result<rustls::ClientConfig, (&'static str, String)> {
    let mut roots = rustls::RootCertStore::empty();
    let certs = read_certificates(ca_file).map_err(|m| ("ca_file", m))?;
    // A system bundle (/etc/ssl/certs/ca-certificates.crt) may hold an authority too old for
    // the verifier: skipped, as long as some can be used.
    let (usable, unusable) = roots.add_parsable_certificates(certs);
    if usable == 0 {
        return Err((
            "ca_file",
            format!(
                "{}: not a valid X.509 certificate in it ({unusable} could not be read)",
                ca_file.display()
            ),
        ));
    }
    if unusable > 0 {
        tracing::warn!(
            "mqtt.ca_file: {}: {unusable} of {} certificates skipped (not usable X.509)",
            ca_file.display(),
            usable + unusable
        );
    }
    // ring, not rustls' default aws-lc-rs (which needs cmake and a long C build).
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ("ca_file", e.to_string()))?
        .with_root_certificates(roots);
    match client {
        None => Ok(builder.with_no_client_auth()),
        Some((cert_file, key_file)) => {
            let certs = read_certificates(cert_file).map_err(|m| ("client_cert_file", m))?;
            let key = std::fs::read(key_file)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| match e {
                        rustls::pki_types::pem::Error::NoItemsFound => {
                            "no private key in it (expected PEM: -----BEGIN PRIVATE KEY-----)"
                                .to_string()
                        }
                        e => format!("not a PEM private key: {e}"),
                    })
                })
                .map_err(|m| ("client_key_file", format!("{}: {m}", key_file.display())))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| {
                (
                    "client_key_file",
                    format!(
                        "{}: does not go with {}: {e}",
                        key_file.display(),
                        cert_file.display()
                    ),
                )
            })
        }
    }
}

/// Every certificate of a PEM file (at least one).
fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{}: no certificate in it (expected PEM: -----BEGIN CERTIFICATE-----)",
            path.display()
        ));
    }
    Ok(certs)
}

/// One line `user:password`.
fn read_credentials(path: &Path) -> Result<(String, String), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let line = text.lines().next().unwrap_or("").trim();
    match line.split_once(':') {
        Some((user, password)) if !user.is_empty() => Ok((user.to_string(), password.to_string())),
        _ => Err("expected one line user:password".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: RawMqtt) -> Result<MqttConfig, Vec<(String, String)>> {
        MqttConfig::check(raw, &|p| p)
    }

    #[test]
    fn urls_and_names_are_checked() {
        let good = check(RawMqtt {
            url: Some("mqtt://10.0.0.2:1884".into()),
            hall: Some("open-2026".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!((good.host.as_str(), good.port), ("10.0.0.2", 1884));
        let default_port = check(RawMqtt {
            url: Some("mqtt://broker".into()),
            hall: Some("h".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(default_port.port, 1883);
        let errors = check(RawMqtt {
            url: Some("http://x".into()),
            hall: Some("a/b".into()),
            ..Default::default()
        })
        .unwrap_err();
        let keys: Vec<&str> = errors.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["mqtt.url", "mqtt.hall"]);
        let tls = check(RawMqtt {
            url: Some("mqtts://x".into()),
            hall: Some("h".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(tls[0].0, "mqtt.ca_file");
        assert!(tls[0].1.contains("mqtts://"), "{tls:?}");
        let plain_with_ca = check(RawMqtt {
            url: Some("mqtt://x".into()),
            hall: Some("h".into()),
            ca_file: Some("ca.pem".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(plain_with_ca[0].0, "mqtt.ca_file");
        assert!(plain_with_ca[0].1.contains("mqtts://"), "{plain_with_ca:?}");
    }

    /// A CA file that is missing, empty, not PEM or not a certificate: an error naming
    /// `mqtt.ca_file` and the file, at configuration time.
    #[test]
    fn a_missing_or_malformed_ca_file_is_named() {
        let tmp = tempfile::Builder::new().prefix("bw-mqtt-ca-").tempdir().unwrap();
        let dir = tmp.path();
        let ca_error = |name: &str, content: Option<&str>| {
            let path = dir.join(name);
            if let Some(content) = content {
                std::fs::write(&path, content).unwrap();
            }
            let errors = check(RawMqtt {
                url: Some("mqtts://broker:8884".into()),
                hall: Some("h".into()),
                ca_file: Some(path.clone()),
                ..Default::default()
            })
            .unwrap_err();
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].0, "mqtt.ca_file");
            assert!(
                errors[0].1.starts_with(&path.display().to_string()),
                "{errors:?}"
            );
            errors[0].1.clone()
        };
        assert!(ca_error("absent.pem", None).contains("No such file"));
        assert!(ca_error("empty.pem", Some("")).contains("no certificate"));
        assert!(ca_error("text.pem", Some("not a certificate\n")).contains("no certificate"));
        let cut = ca_error("cut.pem", Some("-----BEGIN CERTIFICATE-----\nMIIB\n"));
        assert!(cut.contains("not a PEM certificate file"), "{cut}");
        // Good PEM around bytes that are no certificate.
        let junk = ca_error(
            "junk.pem",
            Some("-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n"),
        );
        assert!(
            junk.contains("not a valid X.509 certificate in it"),
            "{junk}"
        );
    }

    /// The system's authorities, as the README suggests for a broker with a public certificate.
    #[test]
    fn the_system_bundle_is_a_ca_file() {
        let bundle = Path::new("/etc/ssl/certs/ca-certificates.crt");
        if !bundle.exists() {
            eprintln!("note: no {} here; not checked", bundle.display());
            return;
        }
        let config = check(RawMqtt {
            url: Some("mqtts://broker.example".into()),
            hall: Some("h".into()),
            ca_file: Some(bundle.into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(config.port, 8883);
        assert_eq!(config.tls.unwrap().ca_file, bundle);
    }

    #[test]
    fn credentials_come_from_a_file_and_stay_out_of_debug_output() {
        let tmp = tempfile::Builder::new().prefix("bw-mqtt-cred-").tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("cred"), "hall:s3cret\n").unwrap();
        let raw = RawMqtt {
            url: Some("mqtt://b".into()),
            hall: Some("h".into()),
            credentials_file: Some(dir.join("cred")),
            ..Default::default()
        };
        let config = check(raw.clone()).unwrap();
        assert_eq!(config.credentials, Some(("hall".into(), "s3cret".into())));
        assert!(!format!("{config:?}").contains("s3cret"));
        std::fs::write(dir.join("cred"), "nopassword\n").unwrap();
        let err = check(raw).unwrap_err();
        assert!(err[0].1.contains("user:password"), "{err:?}");
    }
}
