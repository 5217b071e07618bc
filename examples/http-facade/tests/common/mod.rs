//! Starts the real server binary on a free port with a fresh data directory
//! and talks to it over HTTP.

#![allow(dead_code)]

pub mod faults;
pub mod formats;
pub mod receiver;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const OWNER_KEY: &str = "owner-key-for-tests-0123456789";

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A test's data directory, removed with everything in it when the last
/// clone is dropped (a server started on it holds one). A test that fails
/// leaves it for inspection and prints where it is.
#[derive(Clone, Debug)]
pub struct DataDir(Arc<PathBuf>);

impl std::ops::Deref for DataDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for DataDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if Arc::strong_count(&self.0) > 1 {
            return;
        }
        if std::thread::panicking() {
            eprintln!("the failed test's data directory: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&*self.0);
        }
    }
}

/// A fresh, empty data directory for one test.
pub fn data_dir() -> DataDir {
    let dir = std::env::temp_dir().join(format!(
        "submetrics-server-test-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    DataDir(Arc::new(dir))
}

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_submetrics-server")
}

/// Runs an offline subcommand on a data directory; returns its stdout.
pub fn offline(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(binary())
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .env("SUBMETRICS_OWNER_KEY", OWNER_KEY)
        .output()
        .expect("run the server binary");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

pub struct Server {
    child: Child,
    pub base: String,
    pub dir: DataDir,
    agent: ureq::Agent,
}

impl Server {
    /// Starts a server on a new data directory.
    pub fn start() -> Server {
        Server::start_in(data_dir())
    }

    /// Starts a server on an existing data directory.
    pub fn start_in(dir: DataDir) -> Server {
        Server::start_with(dir, Some(OWNER_KEY)).0
    }

    /// Starts a server with `SUBMETRICS_OWNER_KEY` set to `owner_key` (unset
    /// when `None`); also returns what it printed before listening.
    pub fn start_with(dir: DataDir, owner_key: Option<&str>) -> (Server, Vec<String>) {
        Server::start_with_args(dir, owner_key, &[])
    }

    /// Starts a server on an existing data directory with the owner key
    /// and further command-line arguments.
    pub fn start_in_with(dir: DataDir, args: &[&str]) -> Server {
        Server::start_with_args(dir, Some(OWNER_KEY), args).0
    }

    /// [`Server::start_with`] with further command-line arguments.
    pub fn start_with_args(
        dir: DataDir,
        owner_key: Option<&str>,
        args: &[&str],
    ) -> (Server, Vec<String>) {
        let mut command = Command::new(binary());
        command
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&dir)
            .args(args)
            .env_remove("SUBMETRICS_OWNER_KEY");
        if let Some(key) = owner_key {
            command.env("SUBMETRICS_OWNER_KEY", key);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut printed = Vec::new();
        let base = loop {
            let line = lines
                .next()
                .expect("the server printed its address")
                .expect("read stdout");
            if let Some(address) = line.strip_prefix("listening on ") {
                break address.trim().to_string();
            }
            printed.push(line);
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        // One connection per request: the server may close a connection
        // after an error answer whose body it did not read, and a reused
        // one would then fail the next request.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_idle_connections(0)
            .max_idle_connections_per_host(0)
            .build()
            .into();
        (
            Server {
                child,
                base,
                dir,
                agent,
            },
            printed,
        )
    }

    /// Sends a request with `key`; returns the status and the JSON body
    /// (`Value::Null` when the body is not JSON).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.raw(method, path, key, body.map(|b| b.to_string().into_bytes()))
    }

    pub fn raw(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> (u16, Value) {
        let url = format!("{}{}", self.base, path);
        let request = ureq::http::Request::builder().method(method).uri(&url);
        let request = match key {
            Some(key) => request.header("Authorization", format!("Bearer {key}")),
            None => request,
        };
        let request = request
            .header("Content-Type", "application/json")
            .body(body.unwrap_or_default())
            .expect("request");
        let mut response = self.agent.run(request).expect("the server answers");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Sends `body` with the owner key and the given headers; returns the
    /// status, the content type and the body's bytes.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> (u16, String, Vec<u8>) {
        let mut request = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{}", self.base, path))
            .header("Authorization", format!("Bearer {OWNER_KEY}"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = self
            .agent
            .run(request.body(body).expect("request"))
            .expect("the server answers");
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = response.body_mut().read_to_vec().unwrap_or_default();
        (response.status().as_u16(), content_type, body)
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, Some(OWNER_KEY), None)
    }

    pub fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("POST", path, Some(OWNER_KEY), Some(&body))
    }

    pub fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("PUT", path, Some(OWNER_KEY), Some(&body))
    }

    pub fn delete(&self, path: &str) -> (u16, Value) {
        self.call("DELETE", path, Some(OWNER_KEY), None)
    }

    /// Sends `path` exactly as given (no encoding or normalisation) over a
    /// plain TCP connection; returns the status and the JSON body.
    pub fn raw_path(&self, method: &str, path: &str) -> (u16, Value) {
        self.raw_tcp(method, path, Vec::new())
    }

    /// Sends `body` to `path` (as given, no encoding or normalisation) with
    /// the owner key over a plain TCP connection; returns the status and the
    /// JSON body. The request is written from a second thread while this one
    /// reads the answer, as a client that streams an upload does: a server
    /// may answer (a 413, say) before it has read the whole body and close
    /// the connection, so a write that fails once the answer is in is
    /// expected, not an error.
    pub fn raw_tcp(&self, method: &str, path: &str, body: Vec<u8>) -> (u16, Value) {
        let framing = format!("Content-Length: {}", body.len());
        self.raw_tcp_framed(method, path, &framing, body)
    }

    /// [`Server::raw_tcp`] with the body's framing header given as it is
    /// (`Content-Length: N`, which may promise more than `body` holds, or
    /// `Transfer-Encoding: chunked` with `body` already in chunks): `body`
    /// is all that is sent.
    pub fn raw_tcp_framed(
        &self,
        method: &str,
        path: &str,
        framing: &str,
        body: Vec<u8>,
    ) -> (u16, Value) {
        use std::io::{Read, Write};
        let address = self.base.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).expect("connect");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .expect("read timeout");
        let mut head = format!("{method} ").into_bytes();
        head.extend_from_slice(path.as_bytes());
        head.extend_from_slice(
            format!(
                " HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {OWNER_KEY}\r\nContent-Type: application/json\r\n{framing}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        );
        let mut writer = stream.try_clone().expect("clone the stream");
        let sender = std::thread::spawn(move || {
            writer.write_all(&head)?;
            writer.write_all(&body)
        });
        // Read until the answer is complete (its Content-Length, or the end
        // of the stream without one); a reset after it changes nothing.
        let mut response = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let read_error = loop {
            if response_is_complete(&response) {
                break None;
            }
            match stream.read(&mut chunk) {
                Ok(0) => break None,
                Ok(n) => response.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Some(e),
            }
        };
        // Unblocks a write the server will never read.
        let _ = stream.shutdown(std::net::Shutdown::Both);
        let sent = sender.join().expect("the sending thread");
        let text = String::from_utf8_lossy(&response);
        if let Some(e) = read_error {
            panic!("the answer was cut short: read {e}, write {sent:?}: {text:?}");
        }
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    /// The process id of the server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (`TERM`, `INT`) to the server.
    pub fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -{signal}");
    }

    /// Waits (at most a minute) for the process to end; its exit status.
    pub fn wait(mut self) -> std::process::ExitStatus {
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the server did not stop within a minute");
    }

    /// [`Server::call`] that returns `None` when no answer comes (the
    /// connection is refused or cut), as when the server is killed.
    pub fn try_call(&self, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, Value)> {
        let url = format!("{}{}", self.base, path);
        let request = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("Authorization", format!("Bearer {OWNER_KEY}"))
            .header("Content-Type", "application/json")
            .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
            .expect("request");
        let mut response = self.agent.run(request).ok()?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().ok()?;
        Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// Kills the process at once (SIGKILL) and waits for it.
    pub fn kill(mut self) -> DataDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.dir.clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `response` holds a whole HTTP answer: the head and as many body
/// bytes as its `Content-Length` says (without one, only the end of the
/// stream tells).
fn response_is_complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]);
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .is_some_and(|length| response.len() >= end + 4 + length)
}

/// A small data set: plans m (3000) and m2 (5000), customers A and B.
pub fn seed(server: &Server) {
    let (status, _) = server.post(
        "/data/plans",
        serde_json::json!([
            {"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
            {"id": "m2", "name": "Monthly Plus", "interval": "month", "currency": "USD"}
        ]),
    );
    assert_eq!(status, 200);
    let (status, _) = server.post(
        "/data/customers",
        serde_json::json!([{"id": "A", "name": "Acme", "country": "DE"}, {"id": "B", "name": "Beta", "country": "US"}]),
    );
    assert_eq!(status, 201);
    let (status, _) = server.post(
        "/data/invoices",
        serde_json::json!([
            {"id": "a1", "customer_id": "A", "type": "subscription", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD", "plan_id": "m"},
            {"id": "b1", "customer_id": "B", "type": "subscription", "invoice_date": "2024-01-10", "amount": 5000, "currency": "USD", "plan_id": "m2"}
        ]),
    );
    assert_eq!(status, 200);
}

/// Makes a file immutable (even to root) for as long as it lives.
pub struct Immutable(std::path::PathBuf);

impl Immutable {
    /// `None` where the file system has no immutable attribute.
    pub fn set(path: std::path::PathBuf) -> Option<Immutable> {
        let set = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&path)
            .output()
            .ok()?;
        set.status.success().then_some(Immutable(path))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}
