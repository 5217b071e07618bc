//! The client against a real server started here: every command group, each
//! format, terminal detection, key precedence, bodies, exit codes.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

const KEY: &str = "cli-test-owner-key-0123456789";

/// The server binary, built next to this client (the workspace's target),
/// always from the current sources so the tests never run a stale one.
fn server_binary() -> PathBuf {
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

struct Server {
    child: Child,
    url: String,
    home: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
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
    Server { child, url, home }
}

impl Server {
    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_submetrics"));
        command
            .env("HOME", &self.home)
            .env("SUBMETRICS_API_URL", &self.url)
            .env("SUBMETRICS_API_KEY", KEY)
            .env_remove("NO_COLOR");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run the client")
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON when piped")
    }

    fn seed(&self) {
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

#[test]
fn reports_with_named_and_passed_through_parameters() {
    let server = start();
    server.seed();
    let mrr = server.json(&[
        "reports",
        "mrr",
        "--date",
        "20240101-20240229",
        "--as-of",
        "2024-02-15",
    ]);
    assert_eq!(mrr["result"][1]["contraction"], -2000);
    assert_eq!(mrr["result"][1]["total_mrr"], 3000);
    let by_country = server.json(&[
        "reports",
        "mrr",
        "--date",
        "20240101-20240229",
        "--as-of",
        "2024-02-15",
        "--country",
        "DE",
        "--breakdown",
        "plan",
    ]);
    assert_eq!(by_country["result"][0]["breakdown"]["m"]["total_mrr"], 3000);
    let table = server.run(&[
        "reports",
        "movement-table",
        "--date",
        "20240101-20240229",
        "--as-of",
        "2024-02-15",
        "--format",
        "table",
        "--no-color",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("-$20.00") && text.contains("Contraction: Monthly"),
        "{text}"
    );
    let csv = server.run(&[
        "--format",
        "csv",
        "reports",
        "summary",
        "--as-of",
        "2024-02-15",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&csv.stdout),
        "mrr_current,arr_current,subscribers_current,arpa_current\r\n3000,36000,2,1500\r\n"
    );
}

#[test]
fn customers_plans_data_and_exports() {
    let server = start();
    server.seed();
    assert_eq!(
        server.json(&["customers", "list", "--limit", "1", "--as-of", "2024-01-20"])["result"]["list"]
            [0]["id"],
        "A"
    );
    assert_eq!(server.json(&["customers", "get", "A"])["id"], "A");
    assert!(
        server.json(&["customers", "resync", "A"])["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("customer A recalculated")
    );
    assert_eq!(server.json(&["plans", "list"])["result"]["count"], 1);
    assert_eq!(
        server.json(&["data", "plans", "get", "m"])["name"],
        "Monthly"
    );
    assert_eq!(
        server.json(&[
            "data",
            "plans",
            "update",
            "m",
            "--body",
            r#"{"name": "Monthly Basic"}"#
        ])["updated"],
        "m"
    );
    assert_eq!(
        server.json(&[
            "data",
            "customers",
            "update",
            "B",
            "--body",
            r#"{"email": "b@beta.test"}"#
        ])["result"]["email"],
        "b@beta.test"
    );
    let group = server.json(&[
        "data",
        "plan-groups",
        "create",
        "--body",
        r#"{"name": "Core", "plans": [{"id": "m"}]}"#,
    ]);
    let id = group["id"].as_str().expect("group id").to_string();
    assert_eq!(
        server.json(&["data", "plan-groups", "list"])["result"]["count"],
        1
    );
    assert_eq!(
        server.json(&["data", "plan-groups", "delete", &id])["success"],
        true
    );
    server.json(&[
        "data",
        "data-sources",
        "create",
        "--body",
        r#"{"id": "ds", "name": "Billing"}"#,
    ]);
    assert_eq!(
        server.json(&["data", "data-sources", "get", "ds"])["name"],
        "Billing"
    );
    assert_eq!(
        server.json(&[
            "data",
            "data-sources",
            "update",
            "ds",
            "--body",
            r#"{"name": "Stripe EU", "type": "stripe"}"#
        ]),
        json!({"id": "ds", "name": "Stripe EU", "type": "stripe"})
    );
    assert_eq!(
        server.json(&["data", "data-sources", "get", "ds"]),
        json!({"id": "ds", "name": "Stripe EU", "type": "stripe"})
    );
    let refused = server.run(&[
        "data",
        "data-sources",
        "update",
        "ds",
        "--body",
        r#"{"created": "2024-01-01"}"#,
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "error: server answered 400: data source field `created` cannot be changed; writable: name, type\n"
    );
    assert_eq!(
        server.json(&["data", "invoices", "list", "--limit", "2"])["result"]["count"],
        3
    );
    assert_eq!(
        server.json(&["data", "invoices", "delete", "b1"])["id"],
        "b1"
    );
    assert_eq!(
        server.json(&["data", "customers", "delete", "B"])["success"],
        true
    );
    let export = server.run(&["exports", "invoices"]);
    let text = String::from_utf8_lossy(&export.stdout);
    assert_eq!(text.lines().count(), 3, "header and two invoices: {text}");
    assert!(text.starts_with("id,customer_id,type,invoice_date,amount,currency"));
}

#[test]
fn settings_integrations_account_and_api() {
    let server = start();
    assert_eq!(server.json(&["settings"])["email"]["enabled"], false);
    assert_eq!(
        server.json(&[
            "settings",
            "update",
            "--body",
            r#"{"email": {"enabled": true}}"#
        ])["email"]["enabled"],
        true
    );
    let integrations = server.json(&["integrations"]);
    assert_eq!(
        (
            integrations["payment_platform"]["connected"].clone(),
            integrations["crm"]["connected"].clone()
        ),
        (json!(false), json!(false))
    );
    assert_eq!(server.json(&["account"])["base_currency"], "USD");
    assert_eq!(
        server.json(&[
            "account",
            "update",
            "--body",
            r#"{"timezone": "Europe/Berlin"}"#
        ])["timezone"],
        "Europe/Berlin"
    );
    assert_eq!(server.json(&["account", "billing"])["plan"], "scale");
    assert_eq!(server.json(&["account", "team"])["result"]["count"], 1);
    assert_eq!(server.json(&["account", "api-keys"])["result"]["count"], 1);
    let created = server.json(&[
        "api",
        "POST",
        "/data/plans",
        "id=w",
        "name=Weekly",
        "interval=week",
        "currency=USD",
    ]);
    assert_eq!(created["result"][0]["import_status"], "inserted");
    assert_eq!(
        server.json(&["api", "GET", "/data/plans", "limit=1"])["result"]["list"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        server.json(&["api", "delete", "data/plans/w"])["deleted"],
        "w"
    );
}

#[test]
fn errors_exit_1_on_stderr_with_the_server_status() {
    let server = start();
    let out = server.run(&["customers", "get", "nobody"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: server answered 404: customer nobody not found"
    );
    let bad = server.run(&["reports", "mrr", "--interval", "hour"]);
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("server answered 400: parameter `interval`")
    );
    let body = server.run(&["data", "plans", "create", "--body", "{not json"]);
    assert!(String::from_utf8_lossy(&body.stderr).contains("the body is not valid JSON"));
    let unreachable = server
        .command()
        .args(["--api-url", "http://127.0.0.1:9", "account"])
        .output()
        .expect("run");
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unreachable.stderr).contains("cannot reach http://127.0.0.1:9")
    );
}

#[test]
fn the_key_comes_from_flag_then_environment_then_config_file() {
    let server = start();
    std::fs::write(
        server.home.join(".submetrics.json"),
        json!({"api_key": KEY}).to_string(),
    )
    .expect("config");
    let from_file = server
        .command()
        .env_remove("SUBMETRICS_API_KEY")
        .arg("account")
        .output()
        .expect("run");
    assert!(
        from_file.status.success(),
        "config file key: {}",
        String::from_utf8_lossy(&from_file.stderr)
    );
    let env_wins = server
        .command()
        .env("SUBMETRICS_API_KEY", "wrong-key")
        .arg("account")
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&env_wins.stderr).contains("server answered 401"));
    let flag_wins = server
        .command()
        .env("SUBMETRICS_API_KEY", "wrong-key")
        .args(["--api-key", KEY, "account"])
        .output()
        .expect("run");
    assert!(flag_wins.status.success());
    let verbose = server
        .command()
        .args(["--verbose", "account"])
        .output()
        .expect("run");
    let log = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        log.contains("> GET ")
            && log.contains("Authorization: Bearer cli...89")
            && !log.contains(KEY),
        "{log}"
    );
}

#[test]
fn a_terminal_gets_a_table_and_a_pipe_gets_json() {
    let server = start();
    server.seed();
    let piped = server.run(&["plans", "list"]);
    assert!(
        String::from_utf8_lossy(&piped.stdout)
            .trim_start()
            .starts_with('{')
    );
    // `script` gives the client a terminal as stdout.
    if Command::new("script").arg("--version").output().is_err() {
        return;
    }
    let client = env!("CARGO_BIN_EXE_submetrics");
    let out = Command::new("script")
        .args(["-qec", &format!("{client} plans list"), "/dev/null"])
        .env("HOME", &server.home)
        .env("SUBMETRICS_API_URL", &server.url)
        .env("SUBMETRICS_API_KEY", KEY)
        .output()
        .expect("script");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("id") && text.contains("Monthly") && !text.trim_start().starts_with('{'),
        "{text}"
    );
}
