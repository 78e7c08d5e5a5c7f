//! The daemon's configuration: a TOML file (`systemd/boardwatch.toml` is the commented example),
//! read and checked as a whole before anything starts. Every error names the file and the key,
//! e.g. `boardwatch.toml: boards[0].variant: unknown variant "chess" (expected one of pool, ...)`.
//!
//! ```toml
//! state_dir = "/var/lib/boardwatch"      # one folder per board: events.jsonl, game.pdn, games.pdn
//!
//! [http]
//! listen = "127.0.0.1:8080"
//! token_file = "/etc/boardwatch/token"   # or token = "..."; no token: operator actions are off
//!
//! [retry]                                # a source that fails is reopened after a pause
//! initial_ms = 500                       # doubling up to max_ms
//! max_ms = 30000
//!
//! [[boards]]
//! id = "table1"                          # letters, digits, - and _: used in URLs and folders
//! name = "Table 1"
//! variant = "english"
//! kings = "visible"                      # or "stacked"
//! # start_fen = "B:W18,K5:B14"           # a start other than the standard one
//! # strict = true                        # the original program's referee (errors at once)
//! # error_after = 3.0                    # seconds a board no legal move explains may stay
//! calibration = "/var/lib/boardwatch/table1.calibration.json"
//! palette = "wooden"                     # a built-in colour model or a JSON file
//! # squares = "learnt"                   # the learnt square model reads the squares ("colours")
//! source = { kind = "camera", device = "/dev/video0" }
//! #        { kind = "video", path = "game.mp4" } | { kind = "stream", url = "rtsp://..." }
//! #        { kind = "observations", path = "boards.jsonl", pace_ms = 500, follow = false }
//! [boards.tags]                          # PDN tags of the board's games
//! Event = "Club championship"
//! White = "A. Player"
//!
//! [mqtt]                                 # optional: publish to a tournament hall's broker
//! url = "mqtt://broker.local:1883"       # see `crate::mqtt::config`
//! hall = "spring-open"
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::draughts::fen::parse_fen;
use crate::draughts::Variant;
use crate::tracker::KingStyle;
use crate::vision::SquareReader;

/// Where the daemon listens when the configuration says nothing: local only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// One folder per board below it.
    pub state_dir: PathBuf,
    pub http: HttpConfig,
    pub retry: RetryConfig,
    pub boards: Vec<BoardConfig>,
    /// Publish the boards to an MQTT broker (a tournament hall), when set.
    pub mqtt: Option<crate::mqtt::MqttConfig>,
    /// Cameras over projected game tables: the games' controllers.
    pub screens: Vec<ScreenConfig>,
}

/// A camera bound to a projected game screen (`[[screens]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenConfig {
    /// The screen's name; the game pages use `table` unless opened with `?screen=NAME`.
    pub name: String,
    /// A camera, a stream or a video file (as a board's source).
    pub source: SourceConfig,
    /// Seconds a fingertip dwells on a cell to tap it.
    pub dwell: f64,
}

#[derive(Clone, PartialEq)]
pub struct HttpConfig {
    pub listen: SocketAddr,
    /// The bearer token of operator actions; `None` turns them off.
    pub token: Option<String>,
    /// How many recent events a board's state shows.
    pub recent_events: usize,
}

impl fmt::Debug for HttpConfig {
    // The token stays out of logs and panics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("recent_events", &self.recent_events)
            .finish()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryConfig {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig { initial: Duration::from_millis(500), max: Duration::from_secs(30) }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BoardConfig {
    pub id: String,
    pub name: String,
    pub variant: Variant,
    pub kings: KingStyle,
    /// A start position other than the standard one (PDN FEN, checked against the variant).
    pub start_fen: Option<String>,
    /// The original program's strict referee instead of the tolerant one (see `tracker`).
    pub strict: bool,
    /// Tolerant referee: seconds a board no legal move explains may stay before it is an error.
    pub error_after: f64,
    pub source: SourceConfig,
    /// A calibration file written by the vision tools (board corners, colour model).
    pub calibration: Option<PathBuf>,
    /// A colour model: a built-in name or a JSON file.
    pub palette: Option<String>,
    /// Who reads the playing squares: the colours or the learnt square model.
    pub squares: SquareReader,
    /// PDN tags written with every game of the board, in the order given (without `Date`, each
    /// game gets the UTC day its first observation was logged).
    pub tags: Vec<(String, String)>,
}

/// Where a board's pictures (or board states) come from.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceConfig {
    /// A camera: a V4L2 device path (`/dev/video0`) or an index (`0`).
    Camera { device: String, width: Option<u32>, height: Option<u32>, fps: Option<f64> },
    /// A recorded video file, played at its own frame rate when `realtime`, else as fast as read.
    Video { path: PathBuf, realtime: bool },
    /// A network stream OpenCV can open (RTSP, HTTP MJPEG).
    Stream { url: String },
    /// Board states as JSON lines in the format of `boardwatch track` (tests, replays, other
    /// recognisers): one line every `pace`; with `follow`, lines appended later are read too.
    Observations { path: PathBuf, pace: Duration, follow: bool },
}

impl SourceConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            SourceConfig::Camera { .. } => "camera",
            SourceConfig::Video { .. } => "video",
            SourceConfig::Stream { .. } => "stream",
            SourceConfig::Observations { .. } => "observations",
        }
    }
}

/// A configuration error: the file, the key (`boards[0].variant`) and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {key}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub key: String,
    pub message: String,
}

/// The file as written; checked and turned into [`Config`] by [`Config::parse`].
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    state_dir: Option<PathBuf>,
    #[serde(default)]
    http: RawHttp,
    #[serde(default)]
    retry: RawRetry,
    #[serde(default)]
    boards: Vec<RawBoard>,
    mqtt: Option<crate::mqtt::config::RawMqtt>,
    #[serde(default)]
    screens: Vec<RawScreen>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScreen {
    name: Option<String>,
    source: Option<RawSource>,
    dwell: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    listen: Option<String>,
    token: Option<String>,
    token_file: Option<PathBuf>,
    recent_events: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRetry {
    initial_ms: Option<u64>,
    max_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoard {
    id: Option<String>,
    name: Option<String>,
    variant: Option<String>,
    kings: Option<String>,
    start_fen: Option<String>,
    strict: Option<bool>,
    error_after: Option<f64>,
    source: Option<RawSource>,
    calibration: Option<PathBuf>,
    palette: Option<String>,
    squares: Option<String>,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

/// Every field any kind of source takes; [`check_source`] says which belong to which kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    kind: Option<String>,
    device: Option<toml::Value>,
    width: Option<u32>,
    height: Option<u32>,
    fps: Option<f64>,
    path: Option<PathBuf>,
    realtime: Option<bool>,
    url: Option<String>,
    pace_ms: Option<u64>,
    follow: Option<bool>,
}

/// Collects the errors of one file, so that all of them are reported at once.
struct Checker {
    file: String,
    errors: Vec<ConfigError>,
}

impl Checker {
    fn error(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.errors.push(ConfigError { file: self.file.clone(), key: key.into(), message: message.into() });
    }
}

/// All the errors of a configuration, one per line.
#[derive(Debug)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl Config {
    /// Read and check a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigErrors> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigErrors(vec![ConfigError { file: file.clone(), key: "(file)".into(), message: e.to_string() }])
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Config::parse(&text, &file, base)
    }

    /// Check a configuration's text. `file` names it in errors; relative paths in it are taken
    /// from `base` (the folder of the file), so a configuration means the same from anywhere.
    pub fn parse(text: &str, file: &str, base: &Path) -> Result<Config, ConfigErrors> {
        let mut check = Checker { file: file.to_string(), errors: Vec::new() };
        let deserializer = toml::Deserializer::new(text);
        let raw: RawConfig = match serde_path_to_error::deserialize(deserializer) {
            Ok(raw) => raw,
            Err(err) => {
                let key = err.path().to_string();
                let inner = err.into_inner();
                // toml's message has the line, a caret under the spot and the complaint.
                let message = inner.to_string().trim_end().replace('\n', "\n    ");
                check.error(if key == "." { "(syntax)".to_string() } else { key }, message);
                return Err(ConfigErrors(check.errors));
            }
        };
        let resolve = |p: PathBuf| if p.is_relative() { base.join(p) } else { p };

        let state_dir = raw.state_dir.map(resolve).unwrap_or_else(|| PathBuf::from("/var/lib/boardwatch"));
        let listen_text = raw.http.listen.unwrap_or_else(|| DEFAULT_LISTEN.to_string());
        let listen = listen_text.parse::<SocketAddr>().unwrap_or_else(|e| {
            check.error("http.listen", format!("{listen_text:?} is not an address and port like \"127.0.0.1:8080\": {e}"));
            DEFAULT_LISTEN.parse().expect("default address")
        });
        let token = match (raw.http.token, raw.http.token_file) {
            (Some(_), Some(_)) => {
                check.error("http.token_file", "give either http.token or http.token_file, not both");
                None
            }
            (Some(token), None) => {
                if token.trim().is_empty() {
                    check.error("http.token", "the token is empty");
                }
                Some(token)
            }
            (None, Some(path)) => {
                let path = resolve(path);
                match std::fs::read_to_string(&path) {
                    Ok(text) if text.trim().is_empty() => {
                        check.error("http.token_file", format!("{}: the file is empty", path.display()));
                        None
                    }
                    Ok(text) => Some(text.trim().to_string()),
                    Err(e) => {
                        check.error("http.token_file", format!("{}: {e}", path.display()));
                        None
                    }
                }
            }
            (None, None) => None,
        };
        let recent_events = raw.http.recent_events.unwrap_or(30);

        let defaults = RetryConfig::default();
        let retry = RetryConfig {
            initial: raw.retry.initial_ms.map_or(defaults.initial, Duration::from_millis),
            max: raw.retry.max_ms.map_or(defaults.max, Duration::from_millis),
        };
        if retry.initial.is_zero() {
            check.error("retry.initial_ms", "must be at least 1");
        }
        if retry.max < retry.initial {
            check.error("retry.max_ms", "must not be less than retry.initial_ms");
        }

        if raw.boards.is_empty() && raw.screens.is_empty() {
            check.error("boards", "no board: add at least one [[boards]] table (or a [[screens]] camera)");
        }
        let mut screens: Vec<ScreenConfig> = Vec::new();
        for (i, screen) in raw.screens.into_iter().enumerate() {
            let key = |field: &str| format!("screens[{i}].{field}");
            let name = screen.name.unwrap_or_else(|| "table".to_string());
            if !crate::touch::is_screen_name(&name) {
                check.error(key("name"), format!("{name:?}: use at most 64 letters, digits, `-` and `_`"));
            } else if screens.iter().any(|s| s.name == name) {
                check.error(key("name"), format!("{name:?} is already the name of another screen"));
            }
            let dwell = screen.dwell.unwrap_or(0.6);
            if !(dwell.is_finite() && (0.1..=10.0).contains(&dwell)) {
                check.error(key("dwell"), format!("{dwell}: expected 0.1 to 10 seconds"));
            }
            let source = match screen.source {
                None => {
                    check.error(key("source"), "missing: e.g. source = { kind = \"camera\", device = \"/dev/video1\" }");
                    None
                }
                Some(s) => check_source(&mut check, &key("source"), s, &resolve),
            };
            if matches!(source, Some(SourceConfig::Observations { .. })) {
                check.error(key("source.kind"), "a screen needs pictures: camera, video or stream");
            } else if let Some(source) = source {
                screens.push(ScreenConfig { name, source, dwell });
            }
        }
        let mut boards = Vec::new();
        for (i, board) in raw.boards.into_iter().enumerate() {
            if let Some(b) = check_board(&mut check, i, board, &resolve) {
                boards.push(b);
            }
        }
        for (i, b) in boards.iter().enumerate() {
            if let Some(first) = boards[..i].iter().position(|o| o.id == b.id) {
                check.error(format!("boards[{i}].id"), format!("{:?} is already the id of boards[{first}]", b.id));
            }
        }
        let mqtt = raw.mqtt.and_then(|raw| match crate::mqtt::MqttConfig::check(raw, &resolve) {
            Ok(mqtt) => Some(mqtt),
            Err(errors) => {
                errors.into_iter().for_each(|(key, message)| check.error(key, message));
                None
            }
        });
        if !check.errors.is_empty() {
            return Err(ConfigErrors(check.errors));
        }
        Ok(Config { state_dir, http: HttpConfig { listen, token, recent_events }, retry, boards, mqtt, screens })
    }
}

fn check_board(
    check: &mut Checker,
    i: usize,
    raw: RawBoard,
    resolve: &dyn Fn(PathBuf) -> PathBuf,
) -> Option<BoardConfig> {
    let key = |field: &str| format!("boards[{i}].{field}");
    let errors_before = check.errors.len();
    let id = raw.id.unwrap_or_default();
    if id.is_empty() {
        check.error(key("id"), "missing: every board needs an id (used in URLs and folder names)");
    } else if !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') || id.len() > 64 {
        check.error(key("id"), format!("{id:?}: use at most 64 letters, digits, `-` and `_`"));
    }
    let variant = match raw.variant.as_deref() {
        None => Variant::default(),
        Some(text) => text.parse::<Variant>().unwrap_or_else(|_| {
            let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
            check.error(key("variant"), format!("unknown variant {text:?} (expected one of {})", names.join(", ")));
            Variant::default()
        }),
    };
    let kings = match raw.kings.as_deref() {
        None => KingStyle::default(),
        Some(text) => text.parse::<KingStyle>().unwrap_or_else(|e| {
            check.error(key("kings"), e);
            KingStyle::default()
        }),
    };
    let squares = match raw.squares.as_deref() {
        None | Some("colours") => SquareReader::Colours,
        Some("learnt") => SquareReader::Learnt,
        Some(other) => {
            check.error(key("squares"), format!("{other:?}: need \"colours\" or \"learnt\""));
            SquareReader::Colours
        }
    };
    if let Some(fen) = &raw.start_fen {
        if let Err(e) = parse_fen(fen, &variant.rules()) {
            check.error(key("start_fen"), format!("{fen:?}: {e}"));
        }
    }
    let error_after = raw.error_after.unwrap_or(crate::tracker::DEFAULT_ERROR_AFTER);
    if !(error_after.is_finite() && error_after >= 0.0) {
        check.error(key("error_after"), format!("{error_after}: expected seconds, 0 or more"));
    }
    let source = match raw.source {
        None => {
            check.error(key("source"), "missing: e.g. source = { kind = \"camera\", device = \"/dev/video0\" }");
            None
        }
        Some(s) => check_source(check, &key("source"), s, resolve),
    };
    for name in raw.tags.keys() {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            check.error(format!("{}.{name:?}", key("tags")), "a PDN tag name is letters, digits and `_`");
        }
    }
    // PDN readers expect the seven standard tags first; keep them in the standard's order.
    let standard = ["Event", "Site", "Date", "Round", "White", "Black"];
    let mut tags: Vec<(String, String)> = Vec::new();
    let mut rest = raw.tags;
    for name in standard {
        if let Some(value) = rest.remove(name) {
            tags.push((name.to_string(), value));
        }
    }
    tags.extend(rest);
    if check.errors.len() > errors_before {
        return None;
    }
    Some(BoardConfig {
        name: raw.name.unwrap_or_else(|| id.clone()),
        id,
        variant,
        kings,
        start_fen: raw.start_fen,
        strict: raw.strict.unwrap_or(false),
        error_after,
        source: source?,
        calibration: raw.calibration.map(resolve),
        // A file (not a built-in name such as "wooden") is found from the configuration's folder.
        palette: raw.palette.map(|p| {
            if p.ends_with(".json") || p.contains('/') {
                resolve(PathBuf::from(p)).display().to_string()
            } else {
                p
            }
        }),
        squares,
        tags,
    })
}

fn check_source(
    check: &mut Checker,
    key: &str,
    raw: RawSource,
    resolve: &dyn Fn(PathBuf) -> PathBuf,
) -> Option<SourceConfig> {
    let kinds = "camera, video, stream or observations";
    let Some(kind) = raw.kind.clone() else {
        check.error(format!("{key}.kind"), format!("missing: one of {kinds}"));
        return None;
    };
    // Fields that mean nothing for this kind are errors: a typo must not be silently ignored.
    let given: [(&str, bool); 9] = [
        ("device", raw.device.is_some()),
        ("width", raw.width.is_some()),
        ("height", raw.height.is_some()),
        ("fps", raw.fps.is_some()),
        ("path", raw.path.is_some()),
        ("realtime", raw.realtime.is_some()),
        ("url", raw.url.is_some()),
        ("pace_ms", raw.pace_ms.is_some()),
        ("follow", raw.follow.is_some()),
    ];
    let allowed: &[&str] = match kind.as_str() {
        "camera" => &["device", "width", "height", "fps"],
        "video" => &["path", "realtime"],
        "stream" => &["url"],
        "observations" => &["path", "pace_ms", "follow"],
        other => {
            check.error(format!("{key}.kind"), format!("unknown source kind {other:?} (expected {kinds})"));
            return None;
        }
    };
    let before = check.errors.len();
    for (field, present) in given {
        if present && !allowed.contains(&field) {
            check.error(format!("{key}.{field}"), format!("not used by a {kind} source (it takes {})", allowed.join(", ")));
        }
    }
    let need_path = |check: &mut Checker| match raw.path.clone() {
        Some(p) if !p.as_os_str().is_empty() => Some(resolve(p)),
        _ => {
            check.error(format!("{key}.path"), format!("missing: a {kind} source reads a file"));
            None
        }
    };
    let source = match kind.as_str() {
        "camera" => {
            let device = match &raw.device {
                Some(toml::Value::String(s)) if !s.is_empty() => Some(s.clone()),
                Some(toml::Value::Integer(n)) if *n >= 0 => Some(n.to_string()),
                Some(other) => {
                    check.error(format!("{key}.device"), format!("{other}: expected a device path or an index"));
                    None
                }
                None => {
                    check.error(format!("{key}.device"), "missing: a device path (\"/dev/video0\") or index (0)");
                    None
                }
            };
            if raw.fps.is_some_and(|f| !(f > 0.0 && f <= 240.0)) {
                check.error(format!("{key}.fps"), "must be above 0 and at most 240");
            }
            device.map(|device| SourceConfig::Camera { device, width: raw.width, height: raw.height, fps: raw.fps })
        }
        "video" => need_path(check).map(|path| SourceConfig::Video { path, realtime: raw.realtime.unwrap_or(true) }),
        "stream" => match raw.url.clone() {
            Some(url) if url.contains("://") => Some(SourceConfig::Stream { url }),
            Some(url) => {
                check.error(format!("{key}.url"), format!("{url:?} is not a URL (rtsp://..., http://...)"));
                None
            }
            None => {
                check.error(format!("{key}.url"), "missing: the stream's URL");
                None
            }
        },
        _ => need_path(check).map(|path| SourceConfig::Observations {
            path,
            pace: Duration::from_millis(raw.pace_ms.unwrap_or(0)),
            follow: raw.follow.unwrap_or(false),
        }),
    };
    if check.errors.len() > before {
        return None;
    }
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, "test.toml", Path::new("/etc/bw")).map_err(|e| e.to_string())
    }

    const GOOD: &str = r#"
        state_dir = "state"
        [http]
        listen = "127.0.0.1:0"
        token = "secret"
        [[boards]]
        id = "t1"
        variant = "english"
        source = { kind = "observations", path = "game.jsonl", pace_ms = 20 }
        [boards.tags]
        White = "Ann"
        Event = "Club night"
        Opening = "Old Faithful"
        [[boards]]
        id = "t2"
        name = "Table 2"
        kings = "stacked"
        source = { kind = "camera", device = 0, fps = 15 }
    "#;

    #[test]
    fn a_good_file_is_read_with_defaults_and_paths_from_its_folder() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.state_dir, Path::new("/etc/bw/state"));
        assert_eq!(c.http.listen.to_string(), "127.0.0.1:0");
        assert_eq!(c.http.token.as_deref(), Some("secret"));
        assert!(!format!("{:?}", c.http).contains("secret"), "the token stays out of debug output");
        assert_eq!(c.boards.len(), 2);
        let b = &c.boards[0];
        assert_eq!((b.id.as_str(), b.name.as_str(), b.variant), ("t1", "t1", Variant::English));
        assert_eq!(
            b.source,
            SourceConfig::Observations {
                path: "/etc/bw/game.jsonl".into(),
                pace: Duration::from_millis(20),
                follow: false
            }
        );
        let tags: Vec<&str> = b.tags.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(tags, ["Event", "White", "Opening"], "standard tags first, in the standard's order");
        assert_eq!(c.boards[1].kings, KingStyle::Stacked);
        let c = parse(&GOOD.replace("kings = \"stacked\"", "palette = \"models/mine.json\"")).unwrap();
        assert_eq!(c.boards[1].palette.as_deref(), Some("/etc/bw/models/mine.json"));
        let c = parse(&GOOD.replace("kings = \"stacked\"", "palette = \"four-colour\"")).unwrap();
        assert_eq!(c.boards[1].palette.as_deref(), Some("four-colour"), "built-in names stay names");
        assert_eq!(c.boards[1].squares, SquareReader::Colours, "the colours read the squares unless told");
        let c = parse(&GOOD.replace("kings = \"stacked\"", "squares = \"learnt\"")).unwrap();
        assert_eq!(c.boards[1].squares, SquareReader::Learnt);
        assert!(matches!(&c.boards[1].source, SourceConfig::Camera { device, fps: Some(f), .. } if device == "0" && *f == 15.0));
        assert_eq!(c.retry, RetryConfig::default());
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let bad = GOOD.replace("\"english\"", "\"chess\"");
        let err = parse(&bad).unwrap_err();
        assert!(err.starts_with("test.toml: boards[0].variant: unknown variant \"chess\" (expected one of pool"), "{err}");

        let err = parse(&GOOD.replace("pace_ms = 20", "pace_ms = \"fast\"")).unwrap_err();
        assert!(err.starts_with("test.toml: boards[0].source.pace_ms: "), "{err}");
        assert!(err.contains("line 9"), "toml's line number is kept: {err}");

        let err = parse(&GOOD.replace("variant = ", "varient = ")).unwrap_err();
        assert!(err.contains("boards[0]") && err.contains("unknown field `varient`"), "{err}");

        let err = parse(&GOOD.replace("device = 0, ", "url = \"x\", ")).unwrap_err();
        assert!(err.contains("boards[1].source.url: not used by a camera source"), "{err}");
        assert!(err.contains("boards[1].source.device: missing"), "all errors at once: {err}");

        let err = parse(&GOOD.replace("id = \"t2\"", "id = \"t1\"")).unwrap_err();
        assert!(err.contains("boards[1].id: \"t1\" is already the id of boards[0]"), "{err}");

        let err = parse(&GOOD.replace("127.0.0.1:0", "localhost")).unwrap_err();
        assert!(err.starts_with("test.toml: http.listen: \"localhost\" is not an address"), "{err}");

        let err = parse(&GOOD.replace("\"observations\"", "\"webcam\"")).unwrap_err();
        assert!(err.contains("boards[0].source.kind: unknown source kind \"webcam\""), "{err}");

        let err = parse(&GOOD.replace("kings = \"stacked\"", "squares = \"neural\"")).unwrap_err();
        assert!(err.contains("boards[1].squares: \"neural\": need \"colours\" or \"learnt\""), "{err}");
        let err = parse(&GOOD.replace("kings = \"stacked\"", "start_fen = \"X:Y\"")).unwrap_err();
        assert!(err.contains("boards[1].start_fen: \"X:Y\""), "{err}");
        let err = parse(&GOOD.replace("kings = \"stacked\"", "error_after = -1.0")).unwrap_err();
        assert!(err.contains("boards[1].error_after: -1: expected seconds"), "{err}");
        let c = parse(&GOOD.replace("kings = \"stacked\"", "strict = true\nerror_after = 1.5")).unwrap();
        assert!(c.boards[1].strict && !c.boards[0].strict);
        assert_eq!((c.boards[1].error_after, c.boards[0].error_after), (1.5, crate::tracker::DEFAULT_ERROR_AFTER));

        let err = parse("state_dir = ").unwrap_err();
        assert!(err.starts_with("test.toml: "), "{err}");
        let err = parse("state_dir = \"x\"").unwrap_err();
        assert!(err.contains("boards: no board"), "{err}");
    }

    #[test]
    fn a_missing_token_file_is_named() {
        let err = parse(&GOOD.replace("token = \"secret\"", "token_file = \"nowhere/token\"")).unwrap_err();
        assert!(err.contains("http.token_file: /etc/bw/nowhere/token:"), "{err}");
    }

    #[test]
    fn screens_bind_cameras_to_projected_tables_and_their_mistakes_are_named() {
        let screens = r#"
            state_dir = "state"
            [[screens]]
            source = { kind = "video", path = "taps.mp4" }
            [[screens]]
            name = "corner"
            source = { kind = "camera", device = "/dev/video1" }
            dwell = 0.8
        "#;
        let config = parse(screens).unwrap();
        assert!(config.boards.is_empty(), "screens alone are a configuration");
        assert_eq!(config.screens.len(), 2);
        assert_eq!(config.screens[0].name, "table");
        assert_eq!(config.screens[0].source, SourceConfig::Video { path: PathBuf::from("/etc/bw/taps.mp4"), realtime: true });
        assert_eq!(config.screens[1].dwell, 0.8);

        let err = parse(&screens.replace("dwell = 0.8", "dwell = 0.0").replace("name = \"corner\"", "name = \"table\"")).unwrap_err();
        assert!(err.contains("screens[1].dwell: 0: expected 0.1 to 10 seconds"), "{err}");
        assert!(err.contains("screens[1].name: \"table\" is already"), "{err}");
        let err = parse(&screens.replace("kind = \"video\", path = \"taps.mp4\"", "kind = \"observations\", path = \"s.jsonl\"")).unwrap_err();
        assert!(err.contains("screens[0].source.kind: a screen needs pictures"), "{err}");
    }
}
