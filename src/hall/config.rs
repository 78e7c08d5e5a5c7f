//! `hall.toml`, the configuration of `boardwatch hall`:
//!
//! ```toml
//! state_dir = "/var/lib/boardwatch-hall"   # the hall's own copy: one folder per board
//! round = "Round 3"                        # optional: the round until the arbiter sets it on the page
//!
//! [http]
//! listen = "0.0.0.0:8090"
//! token_file = "/etc/boardwatch/token"     # or token = "..."; the daemons' operator token
//!
//! [mqtt]                                   # as in the daemons' configuration
//! url = "mqtt://broker.local:1883"
//! hall = "spring-open"
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::mqtt::config::RawMqtt;
use crate::mqtt::MqttConfig;

#[derive(Clone, Debug)]
pub struct HallConfig {
    pub state_dir: PathBuf,
    pub round: Option<String>,
    pub listen: SocketAddr,
    pub token: Option<String>,
    pub mqtt: MqttConfig,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHall {
    state_dir: Option<PathBuf>,
    round: Option<String>,
    #[serde(default)]
    http: RawHttp,
    mqtt: Option<RawMqtt>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    listen: Option<String>,
    token: Option<String>,
    token_file: Option<PathBuf>,
}

impl HallConfig {
    /// Read and check `path`; every error names the file and the key.
    pub fn load(path: &Path) -> anyhow::Result<HallConfig> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        HallConfig::parse(&text, &file, &base)
    }

    pub fn parse(text: &str, file: &str, base: &Path) -> anyhow::Result<HallConfig> {
        let raw: RawHall = serde_path_to_error::deserialize(toml::Deserializer::new(text))
            .map_err(|e| {
                let key = e.path().to_string();
                anyhow::anyhow!("{file}: {key}: {}", e.into_inner().to_string().trim_end())
            })?;
        let resolve = |p: PathBuf| if p.is_relative() { base.join(p) } else { p };
        let mut errors = Vec::new();
        let listen_text = raw.http.listen.unwrap_or_else(|| "127.0.0.1:8090".into());
        let listen = listen_text
            .parse()
            .map_err(|e| errors.push(format!("{file}: http.listen: {listen_text:?}: {e}")))
            .ok();
        let token = match (raw.http.token, raw.http.token_file) {
            (Some(_), Some(_)) => {
                errors.push(format!(
                    "{file}: http.token_file: give either http.token or http.token_file, not both"
                ));
                None
            }
            (Some(token), None) => Some(token.trim().to_string()),
            (None, Some(path)) => {
                let path = resolve(path);
                match std::fs::read_to_string(&path) {
                    Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
                    Ok(_) => {
                        errors.push(format!(
                            "{file}: http.token_file: {}: the file is empty",
                            path.display()
                        ));
                        None
                    }
                    Err(e) => {
                        errors.push(format!("{file}: http.token_file: {}: {e}", path.display()));
                        None
                    }
                }
            }
            (None, None) => None,
        };
        let mqtt = match raw.mqtt {
            None => {
                errors.push(format!(
                    "{file}: mqtt: missing: the hall needs [mqtt] url and hall"
                ));
                None
            }
            Some(raw) => MqttConfig::check(raw, &resolve)
                .map_err(|e| {
                    errors.extend(
                        e.into_iter()
                            .map(|(key, message)| format!("{file}: {key}: {message}")),
                    )
                })
                .ok(),
        };
        match (listen, mqtt) {
            (Some(listen), Some(mqtt)) if errors.is_empty() => Ok(HallConfig {
                state_dir: raw
                    .state_dir
                    .map(resolve)
                    .unwrap_or_else(|| PathBuf::from("/var/lib/boardwatch-hall")),
                round: raw.round,
                listen,
                token,
                mqtt,
            }),
            _ => anyhow::bail!("{}", errors.join("\n")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hall_configuration_is_checked_whole() {
        let good = "state_dir = \"h\"\n[http]\nlisten = \"127.0.0.1:0\"\ntoken = \"t\"\n[mqtt]\nurl = \"mqtt://127.0.0.1:1999\"\nhall = \"open\"\n";
        let config = HallConfig::parse(good, "hall.toml", Path::new("/etc")).unwrap();
        assert_eq!(config.state_dir, PathBuf::from("/etc/h"));
        assert_eq!(
            (config.mqtt.port, config.mqtt.hall.as_str()),
            (1999, "open")
        );
        let err = HallConfig::parse(
            "[http]\nlisten = \"nowhere\"\n",
            "hall.toml",
            Path::new("."),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("hall.toml: http.listen") && err.contains("hall.toml: mqtt: missing"),
            "{err}"
        );
        let err = HallConfig::parse("[mqtt]\nurl = 3\n", "hall.toml", Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(err.contains("mqtt.url"), "{err}");
    }

    #[test]
    fn the_example_hall_configuration_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/hall.toml");
        let text = std::fs::read_to_string(path).unwrap();
        // The token file is created at installation; stand in a temporary one.
        let tmp = tempfile::Builder::new().prefix("bw-hall-example-").tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("token"), "s3cret\n").unwrap();
        let text = text.replace(
            "/etc/boardwatch/token",
            &dir.join("token").display().to_string(),
        );
        let config = HallConfig::parse(&text, "hall.toml", Path::new("/etc/boardwatch")).unwrap();
        assert_eq!(config.token.as_deref(), Some("s3cret"));
        assert_eq!(config.mqtt.hall, "spring-open");
        assert_eq!(config.round.as_deref(), Some("Round 1"));
    }
}
