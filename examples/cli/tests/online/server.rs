//! The server each test starts on a directory of its own, and the ways a
//! test runs the client against it.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

pub(crate) const KEY: &str = "cli-test-owner-key-0123456789";

/// The server binary: `SUBMETRICS_SERVER_BIN` when set (`scripts/test`
/// builds it once, before the workspace's tests), else built next to this
/// client (the workspace's target), always from the current sources so the
/// tests never run a stale one. The build resolves the server's features on
/// its own, so in a workspace build it compiles the server again: each of
/// these tests runs in a process of its own, and one such build stalled
/// the first two for a minute and a half.
fn server_binary() -> PathBuf {
    if let Some(given) = std::env::var_os("SUBMETRICS_SERVER_BIN") {
        let given = PathBuf::from(given);
        assert!(
            given.is_file(),
            "SUBMETRICS_SERVER_BIN: no file at {}",
            given.display()
        );
        return given;
    }
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_submetrics"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-p", "submetrics-server"])
        .status()
        .expect("cargo");
    assert!(status.success(), "cannot build the server");
    dir.join("submetrics-server")
}

/// A server on a directory of its own (its data and the client's home),
/// removed when the server stops.
pub(crate) struct Server {
    child: Child,
    pub(crate) url: String,
    root: PathBuf,
    pub(crate) home: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub(crate) fn start() -> Server {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let root = std::env::temp_dir().join(format!("submetrics-cli-test-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let mut child = Command::new(server_binary())
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(root.join("data"))
        .env("SUBMETRICS_OWNER_KEY", KEY)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let url = loop {
        let line = lines.next().expect("address").expect("line");
        if let Some(address) = line.strip_prefix("listening on ") {
            break address.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        url,
        root,
        home,
    }
}

impl Server {
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_submetrics"));
        command
            .env("HOME", &self.home)
            .env("SUBMETRICS_API_URL", &self.url)
            .env("SUBMETRICS_API_KEY", KEY)
            .env_remove("NO_COLOR");
        command
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run the client")
    }

    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON when piped")
    }

    pub(crate) fn seed(&self) {
        let plans = self.home.join("plans.json");
        std::fs::write(
            &plans,
            json!([{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"}])
                .to_string(),
        )
        .expect("write");
        self.json(&[
            "data",
            "plans",
            "create",
            "--body",
            &format!("@{}", plans.display()),
        ]);
        let mut child = self
            .command()
            .args(["data", "customers", "create"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("client");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(
                br#"[{"id": "A", "name": "Acme", "country": "DE"}, {"id": "B", "name": "Beta"}]"#,
            )
            .expect("write stdin");
        assert!(child.wait().expect("wait").success());
        self.json(&[
            "data", "invoices", "create", "--body",
            r#"[{"id": "a1", "customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"},
                {"id": "a2", "customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 1000, "currency": "USD"},
                {"id": "b1", "customer_id": "B", "type": "subscription", "plan_id": "m", "invoice_date": "2024-01-10", "amount": 2000, "currency": "USD"}]"#,
        ]);
    }
}

/// Single-quoted for `sh`.
fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

impl Server {
    /// Runs the client with a terminal as stdout (and stderr) under
    /// util-linux `script`, with extra environment; what it wrote, with the
    /// terminal's CR LF line ends as LF.
    pub(crate) fn terminal(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let line = std::iter::once(env!("CARGO_BIN_EXE_submetrics"))
            .chain(args.iter().copied())
            .map(quote)
            .collect::<Vec<_>>()
            .join(" ");
        let mut command = Command::new("script");
        command
            .args(["-qec", &line, "/dev/null"])
            .env("HOME", &self.home)
            .env("SUBMETRICS_API_URL", &self.url)
            .env("SUBMETRICS_API_KEY", KEY)
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        let out = command.output().expect(
            "`script` (util-linux / bsdutils) must be installed: it gives the client a terminal",
        );
        assert!(out.status.success(), "script {line}: {out:?}");
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
    }
}

impl Server {
    /// Runs the client with `input` on stdin.
    pub(crate) fn with_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("client");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("wait")
    }

    pub(crate) fn json_from_stdin(&self, args: &[&str], input: &str) -> Value {
        let out = self.with_stdin(args, input);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON when piped")
    }
}
