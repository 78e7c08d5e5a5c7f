//! What the MQTT tests and the hall bench share: Debian's broker on a free loopback port, and a
//! throwaway certificate authority for a broker over TLS.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's broker, if installed (`make deps` installs it).
pub fn mosquitto() -> Option<PathBuf> {
    [
        "/usr/sbin/mosquitto",
        "/usr/bin/mosquitto",
        "/usr/local/sbin/mosquitto",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A mosquitto on `port` of the loopback interface, killed when dropped.
pub struct Broker {
    child: Child,
}

impl Broker {
    pub fn start(binary: &Path, dir: &Path, port: u16) -> Broker {
        Broker::start_with(
            binary,
            dir,
            port,
            &format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\n"),
        )
    }

    /// A mosquitto with this configuration, once it listens on `port`.
    pub fn start_with(binary: &Path, dir: &Path, port: u16, conf: &str) -> Broker {
        let config = dir.join("mosquitto.conf");
        std::fs::write(&config, conf).unwrap();
        let child = Command::new(binary)
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "mosquitto did not listen on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Broker { child }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run `openssl` with these arguments in `dir`.
pub fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A throwaway certificate authority (`ca.pem`), a certificate it signed for the broker on
/// 127.0.0.1 (`server.pem`, `server.key`) and one for a client (`client.pem`, `client.key`).
pub fn make_certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let req = |key: &str, out: &str, subject: &str, extra: &[&str]| {
        let mut args = vec!["req"];
        args.extend(ec);
        args.extend(["-keyout", key, "-subj", subject]);
        args.extend(extra);
        args.extend(["-out", out]);
        openssl(dir, &args);
    };
    req(
        "ca.key",
        "ca.pem",
        "/CN=boardwatch test CA",
        &[
            "-x509",
            "-days",
            "2",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    for (name, usage) in [
        (
            "server",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        ),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ] {
        req(
            &format!("{name}.key"),
            &format!("{name}.csr"),
            &format!("/CN=boardwatch test {name}"),
            &[],
        );
        std::fs::write(dir.join(format!("{name}.ext")), usage).unwrap();
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &format!("{name}.ext"),
                "-out",
                &format!("{name}.pem"),
            ],
        );
        // The broker may run as its own user (started as root, mosquitto drops to `mosquitto`).
        use std::os::unix::fs::PermissionsExt;
        let key = dir.join(format!("{name}.key"));
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

/// Whether the `openssl` command is there (it makes the test certificates).
pub fn openssl_available() -> bool {
    Command::new("openssl").arg("version").output().is_ok()
}

/// A mosquitto listener on `port` of the loopback interface that speaks only TLS, with the
/// broker's certificate from [`make_certificates`] in `dir`; `client_certificates`: it also asks
/// clients for a certificate signed by the same authority.
pub fn tls_listener(dir: &Path, port: u16, client_certificates: bool) -> String {
    format!(
        "listener {port} 127.0.0.1\ncafile {ca}\ncertfile {server}.pem\nkeyfile {server}.key\nrequire_certificate {client_certificates}\n",
        ca = dir.join("ca.pem").display(),
        server = dir.join("server").display(),
    )
}
