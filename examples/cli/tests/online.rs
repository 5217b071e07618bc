//! The client against a real server started here: every command group, each
//! format, terminal detection, key precedence, bodies, exit codes.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

const KEY: &str = "cli-test-owner-key-0123456789";

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
struct Server {
    child: Child,
    url: String,
    root: PathBuf,
    home: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
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
    Server {
        child,
        url,
        root,
        home,
    }
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

/// A stand-in for the service that answers one request with `body` (a
/// JSON text), gzip-compressed when the request accepts gzip; returns its
/// address and, once answered, the request's head.
fn answer_once(body: Vec<u8>) -> (String, std::thread::JoinHandle<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        while reader.read_line(&mut head).unwrap() > 2 && !head.ends_with("\r\n\r\n") {}
        let gzip = head.to_ascii_lowercase().contains("accept-encoding: gzip");
        let (body, encoding) = if gzip {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(&body).unwrap();
            (encoder.finish().unwrap(), "Content-Encoding: gzip\r\n")
        } else {
            (body, "")
        };
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{encoding}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).unwrap();
        head
    });
    (address, handle)
}

#[test]
fn a_large_answer_is_read_whole_and_travels_compressed() {
    // 20 MB of JSON: twice what an HTTP client reads by default.
    let rows: Vec<Value> = (0..200_000)
        .map(|i| json!({"customer_id": format!("cus_{i:08}"), "mrr_change": i, "type": "new"}))
        .collect();
    let answer = json!({"result": rows});
    let text = answer.to_string();
    assert!(text.len() > 12_000_000, "{}", text.len());
    let (address, served) = answer_once(text.into_bytes());
    let out = Command::new(env!("CARGO_BIN_EXE_submetrics"))
        .args(["--api-url", &address, "--api-key", "k", "--format", "json"])
        .args(["api", "GET", "/reports/movement-table"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(printed, answer);
    let head = served.join().unwrap().to_ascii_lowercase();
    assert!(head.contains("accept-encoding: gzip"), "{head}");
}

#[test]
fn an_unknown_report_parameter_is_refused_with_a_near_miss() {
    let server = start();
    server.seed();
    let out = server.run(&["reports", "summary", "--curency", "EUR"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: server answered 400: parameter `curency`: report `summary` has no such parameter. Its parameters: baseCurrency\n"
    );
    let out = server.run(&["reports", "churn-scheduled-summary", "--intervall", "month"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: server answered 400: parameter `intervall`: report `churn-scheduled-summary` has no such parameter; \
         did you mean `interval`? Its parameters: interval, baseCurrency, fix_fx, fx_date, currency, customer, plan, \
         billing_freq, pricing_model, status, country, region, industry, size, channel, market, payment_method, age, \
         data_source\n"
    );
}

#[test]
fn as_of_means_the_same_before_and_after_the_command() {
    let server = start();
    server.seed();
    let before = server.json(&["--as-of", "2024-01-15", "reports", "summary"]);
    assert_eq!(before["summary"]["mrr_current"], 5000);
    assert_eq!(
        server.json(&["reports", "summary", "--as-of", "2024-01-15"]),
        before
    );
    let mrr = |args: &[&str]| server.json(args)["result"][0]["total_mrr"].clone();
    assert_eq!(
        mrr(&[
            "reports",
            "mrr",
            "--date",
            "20240101-20240131",
            "--as-of",
            "2024-01-15"
        ]),
        5000
    );
    assert_eq!(
        mrr(&[
            "--as-of",
            "2024-01-15",
            "reports",
            "mrr",
            "--date",
            "20240101-20240131"
        ]),
        5000
    );
}

#[test]
fn a_call_without_a_key_names_where_the_key_comes_from() {
    let server = start();
    let out = server
        .command()
        .env_remove("SUBMETRICS_API_KEY")
        .args(["reports", "summary"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: server answered 401: missing `Authorization: Bearer <API key>` header \
         (or a session cookie) (no API key was given: pass --api-key KEY or set SUBMETRICS_API_KEY)\n"
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

/// Single-quoted for `sh`.
fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

impl Server {
    /// Runs the client with a terminal as stdout (and stderr) under
    /// util-linux `script`, with extra environment; what it wrote, with the
    /// terminal's CR LF line ends as LF.
    fn terminal(&self, args: &[&str], env: &[(&str, &str)]) -> String {
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

#[test]
fn a_terminal_gets_a_table_and_a_pipe_gets_json() {
    let server = start();
    server.seed();
    let piped = server.run(&["plans", "list"]);
    let piped: Value = serde_json::from_slice(&piped.stdout).expect("JSON when piped");
    assert_eq!(piped["result"]["list"][0]["id"], "m");
    assert_eq!(
        server.terminal(&["plans", "list"], &[]),
        "\
id  name     billing_freq  billing_freq_count  currency  product_name  data_source  pricing_model
--  -------  ------------  ------------------  --------  ------------  -----------  -------------
m   Monthly  month                          1  USD                                  licensed
"
    );
    // An explicit format wins over the terminal, and over the pipe.
    let json_on_terminal = server.terminal(&["--format", "json", "plans", "list"], &[]);
    assert_eq!(
        serde_json::from_str::<Value>(&json_on_terminal).expect("JSON on a terminal"),
        piped
    );
    assert_eq!(
        server.json(&["--format", "json", "plans", "list"]),
        piped,
        "--format json when piped"
    );
    let table_piped = server.run(&["plans", "list", "--format", "table"]);
    assert_eq!(
        String::from_utf8_lossy(&table_piped.stdout),
        server.terminal(&["plans", "list"], &[])
    );
}

#[test]
fn negative_amounts_are_red_on_a_terminal_unless_no_color() {
    let server = start();
    server.seed();
    let args = [
        "reports",
        "movement-table",
        "--date",
        "20240201-20240229",
        "--as-of",
        "2024-02-15",
    ];
    let colored = server.terminal(&args, &[]);
    let plain = "\
date        movement_date  currency  customer_id  customer_name  customer_email  type         subtype      description           mrr_change  mrr_change_base_currency  customer_count_change  quantity_change  plans_before  plans_after
----------  -------------  --------  -----------  -------------  --------------  -----------  -----------  --------------------  ----------  ------------------------  ---------------------  ---------------  ------------  -----------
2024-02-01  2024-02-01     USD       A            Acme                           contraction  contraction  Contraction: Monthly     -$20.00                    -20.00                      0                0  [\"m\"]         [\"m\"]
";
    let red_row = "2024-02-01  2024-02-01     USD       A            Acme                           contraction  contraction  Contraction: Monthly  \x1b[31m   -$20.00\x1b[0m  \x1b[31m                  -20.00\x1b[0m                      0                0  [\"m\"]         [\"m\"]\n";
    let (head, _) = plain.split_at(plain.find("2024-02-01").expect("the row"));
    assert_eq!(colored, format!("{head}{red_row}"));
    assert_eq!(server.terminal(&args, &[("NO_COLOR", "1")]), plain);
    let mut no_color = args.to_vec();
    no_color.push("--no-color");
    assert_eq!(server.terminal(&no_color, &[]), plain);
    // Base-currency amounts of a result that does not name its base currency
    // print without a symbol rather than in the row's currency.
    // Piped tables never carry escapes.
    let piped = server.run(&[&args[..], &["--format", "table"]].concat());
    assert_eq!(String::from_utf8_lossy(&piped.stdout), plain);
}

impl Server {
    /// Runs the client with `input` on stdin.
    fn with_stdin(&self, args: &[&str], input: &str) -> Output {
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

    fn json_from_stdin(&self, args: &[&str], input: &str) -> Value {
        let out = self.with_stdin(args, input);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON when piped")
    }
}

#[test]
fn exports_are_csv_of_every_record() {
    let server = start();
    server.seed();
    let csv = |args: &[&str]| {
        let out = server.run(args);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(
        csv(&["exports", "customers"]),
        "id,name,email,created_date,country,currency,status,trial_started,paid_started,trial_end_date,cancel_date,overdue_date,cancel_reason,custom_variables,data_source\r\n\
         A,Acme,,,DE,,,,,,,,,{},\r\n\
         B,Beta,,,,,,,,,,,,{},\r\n"
    );
    assert_eq!(
        csv(&["exports", "plans"]),
        "id,name,billing_freq,billing_freq_count,currency,product_name,data_source,pricing_model\r\n\
         m,Monthly,month,1,USD,,,licensed\r\n"
    );
    assert_eq!(
        csv(&[
            "exports",
            "movements",
            "--date",
            "20240101-20240229",
            "--as-of",
            "2024-02-15"
        ]),
        "date,movement_date,currency,customer_id,customer_name,customer_email,type,subtype,description,mrr_change,mrr_change_base_currency,customer_count_change,quantity_change,plans_before,plans_after\r\n\
         2024-02-01,2024-02-01,USD,A,Acme,,contraction,contraction,Contraction: Monthly,-2000,-2000,0,0,\"[\"\"m\"\"]\",\"[\"\"m\"\"]\"\r\n\
         2024-01-01,2024-01-10,USD,B,Beta,,new,new,New subscription: Monthly,2000,2000,1,1,[],\"[\"\"m\"\"]\"\r\n\
         2024-01-01,2024-01-01,USD,A,Acme,,new,new,New subscription: Monthly,3000,3000,1,1,[],\"[\"\"m\"\"]\"\r\n"
    );
    // --format does not change an export: it is always CSV.
    assert_eq!(
        csv(&["--format", "json", "exports", "plans"]),
        csv(&["exports", "plans"])
    );
}

#[test]
fn data_actions_on_every_resource() {
    let server = start();
    server.seed();
    let customers = server.json(&["data", "customers", "list", "--limit", "1", "--offset", "1"]);
    assert_eq!(customers["result"]["count"], 2);
    assert_eq!(
        customers["result"]["list"]
            .as_array()
            .map(|l| l.iter().map(|c| c["id"].clone()).collect::<Vec<_>>()),
        Some(vec![json!("B")])
    );
    let acme = server.json(&["data", "customers", "get", "A"]);
    assert_eq!(
        (
            acme["id"].clone(),
            acme["name"].clone(),
            acme["country"].clone()
        ),
        (json!("A"), json!("Acme"), json!("DE"))
    );

    server.json(&[
        "data",
        "plans",
        "create",
        "--body",
        r#"{"id": "w", "name": "Weekly", "interval": "week", "currency": "USD"}"#,
    ]);
    assert_eq!(
        server.json(&["data", "plans", "delete", "w"]),
        json!({"result": "ok", "deleted": "w"})
    );
    let gone = server.run(&["data", "plans", "get", "w"]);
    assert_eq!(gone.status.code(), Some(1));

    let id = server.json(&[
        "data",
        "plan-groups",
        "create",
        "--body",
        r#"{"name": "Core", "plans": [{"id": "m"}]}"#,
    ])["id"]
        .as_str()
        .expect("group id")
        .to_string();
    let group = server.json(&["data", "plan-groups", "get", &id]);
    assert_eq!(
        (group["name"].clone(), group["plans"][0]["id"].clone()),
        (json!("Core"), json!("m"))
    );
    assert_eq!(
        server.json(&[
            "data",
            "plan-groups",
            "update",
            &id,
            "--body",
            r#"{"name": "Core plans"}"#
        ]),
        json!({"success": true, "id": id})
    );
    assert_eq!(
        server.json(&["data", "plan-groups", "get", &id])["name"],
        "Core plans"
    );

    server.json(&[
        "data",
        "data-sources",
        "create",
        "--body",
        r#"{"id": "ds", "name": "Billing"}"#,
    ]);
    assert_eq!(
        server.json(&["data", "data-sources", "list"]),
        json!({"result": {"count": 1, "list": [{"id": "ds", "name": "Billing", "type": "api"}]}})
    );
    assert_eq!(
        server.json(&["data", "data-sources", "delete", "ds"]),
        json!({"success": true, "id": "ds"})
    );
    assert_eq!(
        server.json(&["data", "data-sources", "list"])["result"]["count"],
        0
    );

    let invoice = server.json(&["data", "invoices", "get", "a2"]);
    assert_eq!(
        (invoice["customer_id"].clone(), invoice["amount"].clone()),
        (json!("A"), json!(1000))
    );
    server.json(&[
        "data",
        "invoices",
        "update",
        "a2",
        "--body",
        r#"{"customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 1500, "currency": "USD", "description": "discounted"}"#,
    ]);
    let updated = server.json(&["data", "invoices", "get", "a2"]);
    assert_eq!(
        (updated["amount"].clone(), updated["description"].clone()),
        (json!(1500), json!("discounted"))
    );
}

#[test]
fn bodies_inline_from_a_file_and_from_stdin() {
    let server = start();
    let inline = server.json(&[
        "api",
        "POST",
        "/data/plans",
        "--body",
        r#"{"id": "q", "name": "Quarterly", "interval": "month", "interval_count": 3, "currency": "USD"}"#,
    ]);
    assert_eq!(
        inline,
        json!({"result": [{"id": "q", "import_status": "inserted"}]})
    );
    let file = server.home.join("annual.json");
    std::fs::write(
        &file,
        r#"{"id": "y", "name": "Annual", "interval": "year", "currency": "USD"}"#,
    )
    .expect("write");
    assert_eq!(
        server.json(&[
            "api",
            "post",
            "data/plans",
            "--body",
            &format!("@{}", file.display())
        ]),
        json!({"result": [{"id": "y", "import_status": "inserted"}]})
    );
    assert_eq!(
        server.json_from_stdin(
            &["api", "PUT", "/data/plans/y", "--body", "-"],
            r#"{"name": "Yearly"}"#
        )["updated"],
        "y"
    );
    // key=value fields go into the body next to --body's.
    assert_eq!(
        server.json(&[
            "api",
            "PUT",
            "/data/plans/q",
            "--body",
            r#"{"name": "Quarter"}"#,
            "billing_freq_count=3"
        ])["updated"],
        "q"
    );
    let names: Vec<Value> = server.json(&["api", "GET", "/data/plans"])["result"]["list"]
        .as_array()
        .expect("list")
        .iter()
        .map(|p| json!([p["id"], p["name"]]))
        .collect();
    assert_eq!(names, vec![json!(["q", "Quarter"]), json!(["y", "Yearly"])]);
    let missing = server.run(&[
        "api",
        "POST",
        "/data/plans",
        "--body",
        "@/nonexistent/plans.json",
    ]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .starts_with("error: cannot read /nonexistent/plans.json: "),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );

    // Settings and account changes read a piped body without --body.
    let settings = server.json_from_stdin(
        &["settings", "update"],
        r##"{"slack": {"enabled": true, "channel": "#revenue"}}"##,
    );
    assert_eq!(
        settings["slack"],
        json!({"enabled": true, "channel": "#revenue", "events": []})
    );
    assert_eq!(
        server.json(&["settings", "show"])["slack"]["channel"],
        "#revenue"
    );
    let account = server.json_from_stdin(&["account", "update"], r#"{"name": "Demo Inc"}"#);
    assert_eq!(account["name"], "Demo Inc");
    let account = server.json_from_stdin(
        &["account", "update", "--body", "-"],
        r#"{"timezone": "Europe/Paris"}"#,
    );
    assert_eq!(
        (account["name"].clone(), account["timezone"].clone()),
        (json!("Demo Inc"), json!("Europe/Paris"))
    );
    let empty = server.with_stdin(&["account", "update"], "");
    assert_eq!(empty.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&empty.stderr),
        "error: a JSON body is needed: --body '{...}', --body @file.json or stdin\n"
    );
}

#[test]
fn the_address_comes_from_flag_then_environment_then_config_file_then_default() {
    let server = start();
    let config = server.home.join(".submetrics.json");
    // Nothing given: the default address (the verbose log shows it before connecting).
    let default = server
        .command()
        .env_remove("SUBMETRICS_API_URL")
        .args(["--verbose", "account"])
        .output()
        .expect("run");
    assert_eq!(
        String::from_utf8_lossy(&default.stderr).lines().next(),
        Some("> GET http://localhost:8080/account")
    );
    std::fs::write(
        &config,
        json!({"api_key": KEY, "api_url": server.url}).to_string(),
    )
    .expect("config");
    let from_file = server
        .command()
        .env_remove("SUBMETRICS_API_URL")
        .env_remove("SUBMETRICS_API_KEY")
        .arg("account")
        .output()
        .expect("run");
    assert!(
        from_file.status.success(),
        "{}",
        String::from_utf8_lossy(&from_file.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&from_file.stdout).expect("json")["base_currency"],
        "USD"
    );
    std::fs::write(
        &config,
        json!({"api_key": KEY, "api_url": "http://127.0.0.1:9"}).to_string(),
    )
    .expect("config");
    let env_wins = server.command().arg("account").output().expect("run");
    assert!(env_wins.status.success(), "the environment beats the file");
    let flag_wins = server
        .command()
        .env("SUBMETRICS_API_URL", "http://127.0.0.1:9")
        .args(["--api-url", &server.url, "account"])
        .output()
        .expect("run");
    assert!(flag_wins.status.success(), "the flag beats the environment");
    let file_used = server
        .command()
        .env_remove("SUBMETRICS_API_URL")
        .arg("account")
        .output()
        .expect("run");
    assert_eq!(file_used.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&file_used.stderr)
            .starts_with("error: cannot reach http://127.0.0.1:9: "),
        "{}",
        String::from_utf8_lossy(&file_used.stderr)
    );
    std::fs::write(&config, "{not json").expect("config");
    let broken = server
        .command()
        .env_remove("SUBMETRICS_API_KEY")
        .arg("account")
        .output()
        .expect("run");
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&broken.stderr).contains(".submetrics.json is not valid JSON"),
        "{}",
        String::from_utf8_lossy(&broken.stderr)
    );
}

/// What `exports` writes (CSV) and what `data <kind> list --format json`
/// writes, `local --data` reads back to the numbers the service computes:
/// custom variables, invoice lines, quoted text and every report below.
#[test]
fn exports_and_json_lists_read_back_offline_to_the_same_numbers() {
    let server = start();
    for (kind, body) in [
        (
            "plans",
            r#"[{"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"},
                {"id": "y", "name": "Annual, \"gold\"", "interval": "year", "currency": "USD"}]"#,
        ),
        (
            "customers",
            r#"[{"id": "A", "name": "Acme, Inc.", "country": "DE", "custom_variables": {"industry": "Retail"}},
                {"id": "B", "name": "Beta", "email": "b@example.com"},
                {"id": "C", "name": "Gamma", "custom_variables": {"industry": "SaaS", "tier": "gold"}}]"#,
        ),
        (
            "invoices",
            r#"[{"id": "a1", "customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-01-01", "amount": 3000, "currency": "USD"},
                {"id": "a2", "customer_id": "A", "type": "subscription", "plan_id": "m", "invoice_date": "2024-02-01", "amount": 4500, "currency": "USD",
                 "lines": [{"description": "seats", "amount": 4500, "quantity": 3}]},
                {"id": "b1", "customer_id": "B", "type": "subscription", "plan_id": "y", "invoice_date": "2024-01-10", "amount": 120000, "currency": "USD"},
                {"id": "c1", "customer_id": "C", "type": "subscription", "plan_id": "m", "invoice_date": "2024-01-20", "amount": 2000, "currency": "USD"}]"#,
        ),
    ] {
        server.json(&["data", kind, "create", "--body", body]);
    }
    let root = server.home.join("round-trip");
    let (csv, json_dir) = (root.join("csv"), root.join("json"));
    std::fs::create_dir_all(&csv).expect("dir");
    std::fs::create_dir_all(&json_dir).expect("dir");
    for kind in ["customers", "plans", "invoices"] {
        let exported = server.run(&["exports", kind]);
        assert!(exported.status.success());
        std::fs::write(csv.join(format!("{kind}.csv")), &exported.stdout).expect("write");
        let listed = server.run(&["data", kind, "list", "--format", "json"]);
        assert!(listed.status.success());
        std::fs::write(json_dir.join(format!("{kind}.json")), &listed.stdout).expect("write");
    }
    let at = "2024-02-15";
    let reports: &[&[&str]] = &[
        &["summary"],
        &["mrr", "--date", "20240101-20240229"],
        &["mrr", "--date", "20240101-20240229", "--industry", "retail"],
        &["custom-variables"],
        &["invoices-detail", "--customer", "A"],
        &[
            "movement-table",
            "--date",
            "20240101-20240229",
            "--customer",
            "A",
        ],
    ];
    let summary = server.json(&["--as-of", at, "reports", "summary"]);
    assert_eq!(summary["summary"]["mrr_current"], 4500 + 10000 + 2000);
    for dir in [&csv, &json_dir] {
        for report in reports {
            let mut online = vec!["--as-of", at, "reports"];
            online.extend_from_slice(report);
            let expected = server.json(&online);
            let offline = server
                .command()
                .args(["local", "--data"])
                .arg(dir)
                .args(["--as-of", at, "reports"])
                .args(*report)
                .output()
                .expect("run");
            let stderr = String::from_utf8_lossy(&offline.stderr);
            assert_eq!(
                stderr, "loaded 3 customers, 2 plans, 4 invoices; rejected 0\n",
                "{dir:?} {report:?}"
            );
            let got: Value = serde_json::from_slice(&offline.stdout).expect("JSON");
            assert_eq!(got, expected, "{dir:?} {report:?}");
        }
    }
}
