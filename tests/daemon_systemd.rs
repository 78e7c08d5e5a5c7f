//! The service files in `systemd/`: the unit passes `systemd-analyze verify` without a warning,
//! and the example configuration is valid.

use std::path::Path;
use std::process::Command;

fn repo(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

#[test]
fn the_unit_verifies_cleanly() {
    if Command::new("systemd-analyze").arg("--version").output().is_err() {
        eprintln!("note: systemd-analyze is not installed; unit check skipped (apt-get install systemd)");
        return;
    }
    let unit = std::fs::read_to_string(repo("systemd/boardwatch.service")).unwrap();
    for needed in [
        "Type=notify",
        "Restart=on-failure",
        "WatchdogSec=",
        "User=boardwatch",
        "SupplementaryGroups=video",
        "DeviceAllow=char-video4linux rw",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "StateDirectory=boardwatch",
    ] {
        assert!(unit.contains(needed), "the unit lacks {needed}");
    }
    // verify checks that ExecStart's program exists: point it at the binary just built.
    let tmp = tempfile::Builder::new().prefix("bw-unit-").tempdir().unwrap();
    let dir = tmp.path();
    let path = dir.join("boardwatch.service");
    std::fs::write(&path, unit.replace("/usr/local/bin/boardwatch", env!("CARGO_BIN_EXE_boardwatch"))).unwrap();
    let output = Command::new("systemd-analyze").args(["verify", "--man=no"]).arg(&path).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{said}");
    // Unknown or misspelt settings are only warnings for systemd: none is allowed here.
    let about_the_unit: Vec<&str> = said.lines().filter(|l| l.contains("boardwatch")).collect();
    assert!(about_the_unit.is_empty(), "{said}");
}

#[test]
fn the_example_configuration_is_valid() {
    let text = std::fs::read_to_string(repo("systemd/boardwatch.toml")).unwrap();
    // The token file is created at installation; stand in a temporary one.
    let tmp = tempfile::Builder::new().prefix("bw-example-").tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("token"), "s3cret\n").unwrap();
    let text = text.replace("/etc/boardwatch/token", &dir.join("token").display().to_string());
    let config = boardwatch::daemon::Config::parse(&text, "boardwatch.toml", Path::new("/etc/boardwatch"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.http.listen.to_string(), "127.0.0.1:8080", "local only by default");
    assert_eq!(config.http.token.as_deref(), Some("s3cret"));
    assert_eq!(config.state_dir, Path::new("/var/lib/boardwatch"));
    let ids: Vec<&str> = config.boards.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["table1", "table2"]);
    assert_eq!(config.boards[0].calibration.as_deref(), Some(Path::new("/etc/boardwatch/table1.calibration.json")));
}
