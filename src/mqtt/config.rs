//! The `[mqtt]` section of the daemon's and the hall's configuration:
//!
//! ```toml
//! [mqtt]
//! url = "mqtt://broker.local:1883"       # mqtt://host[:port] (1883 when not given)
//! hall = "spring-open"                   # the first level of the topic tree below boardwatch/
//! credentials_file = "/etc/boardwatch/mqtt-credentials"   # one line: user:password (optional)
//! # client_id = "boardwatch-camera-pc-1" # default: boardwatch-{hall}-{first board} (daemon), boardwatch-hall-{hall}
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The section as written.
#[derive(Deserialize, Default, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawMqtt {
    pub url: Option<String>,
    pub hall: Option<String>,
    pub credentials_file: Option<PathBuf>,
    pub client_id: Option<String>,
}

#[derive(Clone, PartialEq)]
pub struct MqttConfig {
    pub host: String,
    pub port: u16,
    pub hall: String,
    /// User and password, read from `credentials_file`.
    pub credentials: Option<(String, String)>,
    pub client_id: Option<String>,
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
        let (mut host, mut port) = (String::new(), 1883);
        match raw.url.as_deref() {
            None => error(
                "url",
                "missing: the broker, like \"mqtt://127.0.0.1:1883\"".into(),
            ),
            Some(url) => match parse_url(url) {
                Ok((h, p)) => (host, port) = (h, p),
                Err(message) => error("url", format!("{url:?}: {message}")),
            },
        }
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
        options
    }
}

/// `mqtt://host[:port]`.
fn parse_url(url: &str) -> Result<(String, u16), String> {
    let rest = if let Some(rest) = url
        .strip_prefix("mqtt://")
        .or_else(|| url.strip_prefix("tcp://"))
    {
        rest
    } else if url.starts_with("mqtts://") || url.starts_with("ssl://") {
        return Err("TLS brokers are not supported yet: use mqtt:// (a TLS tunnel such as stunnel can carry it)".into());
    } else {
        return Err("expected mqtt://host[:port]".into());
    };
    let rest = rest.trim_end_matches('/');
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (
            host,
            port.parse::<u16>()
                .map_err(|_| format!("port {port:?} is not a number"))?,
        ),
        None => (rest, 1883),
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok((host.to_string(), port))
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
        assert!(tls[0].1.contains("TLS"), "{tls:?}");
    }

    #[test]
    fn credentials_come_from_a_file_and_stay_out_of_debug_output() {
        let dir = std::env::temp_dir().join(format!("bw-mqtt-cred-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
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
