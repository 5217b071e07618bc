//! API keys, roles, account isolation for writes, the account documents
//! across restarts, the offline `keys` command and the first start.

mod common;

use common::{OWNER_KEY, Server, binary, data_dir, offline, seed};
use serde_json::{Value, json};
use std::process::Command;

fn create_key(server: &Server, key: &str, role: &str) -> (String, String) {
    let (status, body) = server.call(
        "POST",
        "/account/api-keys",
        Some(key),
        Some(&json!({"name": format!("{role} key"), "role": role})),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["role"], role);
    assert_eq!(body["name"], json!(format!("{role} key")));
    (
        body["id"].as_str().expect("id").to_string(),
        body["key"].as_str().expect("key").to_string(),
    )
}

fn owner_key_id(server: &Server) -> String {
    let (_, keys) = server.get("/account/api-keys");
    keys["result"]["list"]
        .as_array()
        .and_then(|l| l.iter().find(|k| k["role"] == "owner"))
        .and_then(|k| k["id"].as_str())
        .expect("the owner key is listed")
        .to_string()
}

#[test]
fn key_creation_and_revocation_rules() {
    let server = Server::start();
    let (admin_id, admin) = create_key(&server, OWNER_KEY, "admin");
    let owner_id = owner_key_id(&server);
    // An admin cannot revoke the owner key.
    let (status, body) = server.call(
        "DELETE",
        &format!("/account/api-keys/{owner_id}"),
        Some(&admin),
        None,
    );
    assert_eq!((status, body["code"].clone()), (403, json!("forbidden")));
    assert_eq!(server.get("/account").0, 200, "the owner key still works");
    // No key revokes itself.
    let (status, body) = server.call(
        "DELETE",
        &format!("/account/api-keys/{admin_id}"),
        Some(&admin),
        None,
    );
    assert_eq!((status, body["code"].clone()), (409, json!("conflict")));
    let (status, body) = server.delete("/account/api-keys/key_0000000000000000");
    assert_eq!((status, body["code"].clone()), (404, json!("not_found")));
    // Bad bodies name the field.
    for (body, field) in [
        (json!({"role": 5}), "role"),
        (json!({"role": ["admin"]}), "role"),
        (json!({"name": 7}), "name"),
        (json!({"name": {"x": 1}, "role": "admin"}), "name"),
        (json!({"role": "superuser"}), "role"),
    ] {
        let (status, answer) = server.post("/account/api-keys", body.clone());
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["code"], "bad_request");
        assert!(
            answer["error"]
                .as_str()
                .unwrap_or("")
                .contains(&format!("`{field}`")),
            "{body}: {answer}"
        );
    }
    // An admin may revoke another admin key; the revoked key is 401 at once.
    let (other_id, other) = create_key(&server, OWNER_KEY, "admin");
    assert_eq!(
        server.call(
            "DELETE",
            &format!("/account/api-keys/{other_id}"),
            Some(&admin),
            None
        ),
        (200, json!({"success": true, "id": other_id}))
    );
    assert_eq!(server.call("GET", "/account", Some(&other), None).0, 401);
    // The owner may revoke the admin key.
    assert_eq!(
        server.delete(&format!("/account/api-keys/{admin_id}")).0,
        200
    );
    assert_eq!(server.call("GET", "/account", Some(&admin), None).0, 401);
}

#[test]
fn a_readonly_keys_refused_write_names_the_path_as_requested() {
    let server = Server::start();
    let (id, readonly) = create_key(&server, OWNER_KEY, "readonly");
    let plan = json!({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"});
    for path in ["/data/plans", "/v1/data/plans"] {
        assert_eq!(
            server.call("POST", path, Some(&readonly), Some(&plan)),
            (
                403,
                json!({"error": format!("key `{id}` is readonly: it cannot POST {path}"),
                       "code": "forbidden"})
            )
        );
    }
}

#[test]
fn readonly_is_refused_every_admin_route_and_admin_may_use_them() {
    let server = Server::start();
    seed(&server);
    let (_, readonly) = create_key(&server, OWNER_KEY, "readonly");
    let (_, admin) = create_key(&server, OWNER_KEY, "admin");
    let (spare_id, _) = create_key(&server, OWNER_KEY, "readonly");
    let revoke = format!("/account/api-keys/{spare_id}");
    let cases: Vec<(&str, &str, Option<Value>)> = vec![
        ("GET", "/account", None),
        ("PUT", "/account", Some(json!({"name": "x"}))),
        ("GET", "/account/billing", None),
        ("GET", "/account/team", None),
        ("GET", "/account/api-keys", None),
        (
            "POST",
            "/account/api-keys",
            Some(json!({"role": "readonly"})),
        ),
        ("DELETE", &revoke, None),
        ("GET", "/settings/notifications", None),
        (
            "PUT",
            "/settings/notifications",
            Some(json!({"email": {"enabled": true}})),
        ),
        ("GET", "/settings/payment-platform", None),
        ("GET", "/settings/stripe", None),
        ("GET", "/settings/crm", None),
        ("GET", "/settings/hubspot", None),
        ("POST", "/customers/A/resync", None),
        ("PUT", "/profile", Some(json!({"first_name": "R"}))),
    ];
    for (method, path, body) in &cases {
        for prefix in ["", "/v1"] {
            let (status, answer) = server.call(
                method,
                &format!("{prefix}{path}"),
                Some(&readonly),
                body.as_ref(),
            );
            assert_eq!(status, 403, "{method} {prefix}{path}: {answer}");
            assert_eq!(answer["code"], "forbidden");
        }
    }
    // Nothing changed.
    assert_eq!(
        server.get("/settings/notifications").1["email"]["enabled"],
        false
    );
    assert_eq!(server.get("/profile").1["first_name"], "");
    // Admin keys may use them.
    let (status, account) = server.call(
        "PUT",
        "/account",
        Some(&admin),
        Some(&json!({"name": "Admin renamed"})),
    );
    assert_eq!(
        (status, account["name"].clone()),
        (200, json!("Admin renamed"))
    );
    let (status, settings) = server.call(
        "PUT",
        "/settings/notifications",
        Some(&admin),
        Some(&json!({"slack": {"channel": "#metrics"}})),
    );
    assert_eq!(
        (status, settings["slack"]["channel"].clone()),
        (200, json!("#metrics"))
    );
    assert_eq!(
        server.call("DELETE", &revoke, Some(&admin), None),
        (200, json!({"success": true, "id": spare_id}))
    );
}

#[test]
fn another_account_cannot_touch_these_records_or_keys() {
    let dir = Server::start_in(data_dir()).kill();
    let created = offline(&dir, &["accounts", "create", "second"]);
    let other = created.trim().rsplit(' ').next().expect("key").to_string();
    let server = Server::start_in(dir);
    seed(&server);
    server.post("/data/data-sources", json!({"id": "ds", "name": "Mine"}));
    let (group, _) = {
        let (_, body) = server.post(
            "/data/plan-groups",
            json!({"name": "G", "plans": [{"id": "m"}]}),
        );
        (body["id"].as_str().expect("id").to_string(), ())
    };
    let owner_id = owner_key_id(&server);
    let cases: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", "/data/customers/A".into(), None),
        (
            "PUT",
            "/data/customers/A".into(),
            Some(json!({"name": "Stolen"})),
        ),
        ("DELETE", "/data/customers/A".into(), None),
        ("GET", "/data/plans/m2".into(), None),
        (
            "PUT",
            "/data/plans/m2".into(),
            Some(json!({"name": "Stolen"})),
        ),
        ("DELETE", "/data/plans/m2".into(), None),
        ("GET", "/data/invoices/a1".into(), None),
        ("DELETE", "/data/invoices/a1".into(), None),
        ("GET", format!("/data/plan-groups/{group}"), None),
        (
            "PUT",
            format!("/data/plan-groups/{group}"),
            Some(json!({"name": "Stolen"})),
        ),
        ("DELETE", format!("/data/plan-groups/{group}"), None),
        ("GET", "/data/data-sources/ds".into(), None),
        (
            "PUT",
            "/data/data-sources/ds".into(),
            Some(json!({"name": "Stolen"})),
        ),
        ("DELETE", "/data/data-sources/ds".into(), None),
        ("DELETE", format!("/account/api-keys/{owner_id}"), None),
    ];
    for (method, path, body) in &cases {
        let (status, answer) = server.call(method, path, Some(&other), body.as_ref());
        assert_eq!(status, 404, "{method} {path}: {answer}");
        assert_eq!(answer["code"], "not_found");
    }
    assert_eq!(server.get("/data/customers/A").1["name"], "Acme");
    assert_eq!(server.get("/data/plans/m2").1["name"], "Monthly Plus");
    assert_eq!(server.get("/data/invoices/a1").0, 200);
    assert_eq!(
        server.get(&format!("/data/plan-groups/{group}")).1["name"],
        "G"
    );
    assert_eq!(server.get("/data/data-sources/ds").1["name"], "Mine");
    assert_eq!(
        server.get("/account").0,
        200,
        "the owner key is not revoked"
    );
}

#[test]
fn account_documents_keys_and_deletes_survive_a_restart() {
    let server = Server::start();
    seed(&server);
    assert_eq!(
        server
            .put(
                "/profile",
                json!({"first_name": "Ada", "last_name": "L", "locale": "de"})
            )
            .0,
        200
    );
    assert_eq!(
        server
            .put(
                "/settings/notifications",
                json!({"email": {"enabled": true, "recipients": ["a@b.test"]}})
            )
            .0,
        200
    );
    // A base currency the stored USD amounts convert into: it has a rate.
    server.post(
        "/data/fx-rates",
        json!([{"date": "2024-01-01", "currency": "EUR", "rate": 0.9}]),
    );
    assert_eq!(
        server.put("/account", json!({"base_currency": "XYZ"})).1["error"],
        "setting `base_currency`: XYZ has no exchange rate, and amounts in USD (invoice a1) \
         would need one; load its rates first"
    );
    assert_eq!(
        server
            .put(
                "/account",
                json!({"name": "Kept", "base_currency": "EUR", "churn_grace_days": 4})
            )
            .0,
        200
    );
    let (_, kept) = create_key(&server, OWNER_KEY, "readonly");
    let (revoked_id, revoked) = create_key(&server, OWNER_KEY, "admin");
    assert_eq!(
        server.delete(&format!("/account/api-keys/{revoked_id}")).0,
        200
    );
    assert_eq!(server.delete("/data/customers/B").0, 200);
    let server = Server::start_in(server.kill());
    let (_, profile) = server.get("/profile");
    assert_eq!(
        (
            &profile["first_name"],
            &profile["last_name"],
            &profile["locale"]
        ),
        (&json!("Ada"), &json!("L"), &json!("de"))
    );
    let (_, settings) = server.get("/settings/notifications");
    assert_eq!(settings["email"]["enabled"], true);
    assert_eq!(settings["email"]["recipients"], json!(["a@b.test"]));
    assert_eq!(settings["email"]["frequency"], "weekly");
    let (_, account) = server.get("/account");
    assert_eq!(account["name"], "Kept");
    assert_eq!(account["base_currency"], "EUR");
    assert_eq!(account["churn_grace_days"], 4);
    assert_eq!(server.call("GET", "/data/plans", Some(&kept), None).0, 200);
    assert_eq!(
        server.call("GET", "/data/plans", Some(&revoked), None).0,
        401
    );
    let (_, keys) = server.get("/account/api-keys");
    let listed = keys["result"]["list"]
        .as_array()
        .and_then(|l| l.iter().find(|k| k["id"] == json!(revoked_id)))
        .cloned()
        .expect("the revoked key is listed");
    assert_eq!(listed["revoked"], true);
    assert_eq!(server.get("/data/customers/B").0, 404);
    assert_eq!(server.get("/data/invoices/b1").0, 404);
    assert_eq!(server.get("/data/customers").1["result"]["count"], 1);
}

#[test]
fn concurrent_updates_of_the_account_row_lose_nothing() {
    let server = std::sync::Arc::new(Server::start());
    let rounds = 25;
    let writers: Vec<_> = (0..3)
        .map(|writer| {
            let server = std::sync::Arc::clone(&server);
            std::thread::spawn(move || {
                for i in 0..rounds {
                    let (path, body) = match writer {
                        0 => ("/profile", json!({"first_name": format!("n{i}")})),
                        1 => (
                            "/settings/notifications",
                            json!({"slack": {"channel": format!("#c{i}")}}),
                        ),
                        _ => ("/account", json!({"name": format!("a{i}")})),
                    };
                    assert_eq!(server.put(path, body).0, 200);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    let last = rounds - 1;
    assert_eq!(
        server.get("/profile").1["first_name"],
        json!(format!("n{last}"))
    );
    assert_eq!(
        server.get("/settings/notifications").1["slack"]["channel"],
        json!(format!("#c{last}"))
    );
    assert_eq!(server.get("/account").1["name"], json!(format!("a{last}")));
}

#[test]
fn the_offline_keys_command_creates_lists_and_revokes() {
    let server = Server::start();
    let dir = server.dir.clone();
    let key = offline(&dir, &["keys", "create", "--role", "admin", "--name", "ci"])
        .trim()
        .to_string();
    assert!(key.starts_with("sm_") && key.len() == 67, "{key}");
    // A key created offline works at once on the running service.
    assert_eq!(server.call("GET", "/account", Some(&key), None).0, 200);
    let listed = offline(&dir, &["keys", "list"]);
    let line = listed
        .lines()
        .find(|l| l.contains("\tci\t"))
        .expect("the new key is listed")
        .to_string();
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(fields.len(), 5, "{line}");
    assert_eq!(&fields[1..4], &["account 1", "admin", "ci"]);
    assert!(!listed.contains(&key), "the key itself is never listed");
    let id = fields[0].to_string();
    assert_eq!(
        offline(&dir, &["keys", "revoke", &id]).trim(),
        format!("revoked {id}")
    );
    assert!(
        offline(&dir, &["keys", "list"])
            .lines()
            .any(|l| l.starts_with(&id) && l.ends_with("\trevoked"))
    );
    // The running service stops trusting it within its key cache time (2 s).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(server.call("GET", "/account", Some(&key), None).0, 401);
    let output = Command::new(binary())
        .args(["keys", "revoke", "key_missing", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no key `key_missing`"));
    let output = Command::new(binary())
        .args(["keys", "create", "--role", "root", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("`root`"));
}

#[test]
fn the_first_start_prints_a_working_owner_key() {
    let (server, printed) = Server::start_with(data_dir(), None);
    let key = printed
        .iter()
        .find_map(|l| l.strip_prefix("created account `default`; owner API key (shown once): "))
        .expect("the owner key is printed")
        .trim()
        .to_string();
    assert!(key.starts_with("sm_") && key.len() == 67, "{key}");
    let (status, keys) = server.call("GET", "/account/api-keys", Some(&key), None);
    assert_eq!(status, 200);
    assert_eq!(keys["result"]["count"], 1);
    assert_eq!(keys["result"]["list"][0]["role"], "owner");
    // A second start prints no key and the key still works.
    let (server, printed) = Server::start_with(server.kill(), None);
    assert!(printed.iter().all(|l| !l.contains("sm_")), "{printed:?}");
    assert_eq!(server.call("GET", "/account", Some(&key), None).0, 200);
}

#[test]
fn a_too_short_owner_key_stops_the_first_start_before_writing() {
    let dir = data_dir();
    let output = Command::new(binary())
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .env("SUBMETRICS_OWNER_KEY", "short")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "error: SUBMETRICS_OWNER_KEY must have at least 16 characters"
    );
    assert!(!dir.join("submetrics.db").exists(), "nothing was written");
    let server = Server::start_in(dir);
    assert_eq!(server.get("/account").0, 200);
    assert_eq!(server.get("/account/api-keys").1["result"]["count"], 1);
}

#[test]
fn a_misspelt_setting_in_the_environment_stops_the_start_and_an_unknown_one_is_warned_of() {
    let dir = data_dir();
    // `SUBMETRICS_RATELIMIT` used to leave the service without a rate limit.
    let output = Command::new(binary())
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .env("SUBMETRICS_RATELIMIT", "5")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: SUBMETRICS_RATELIMIT is not a setting of the service; \
         did you mean SUBMETRICS_RATE_LIMIT?\n"
    );
    assert!(!dir.join("submetrics.db").exists(), "nothing was created");
    // A variable far from every setting is only warned of: the clients and
    // tools read variables of the prefix too.
    let output = Command::new(binary())
        .args(["--data-dir"])
        .arg(&dir)
        .args(["accounts", "create", "Second"])
        .env("SUBMETRICS_THEME", "dark")
        .output()
        .expect("run");
    assert!(output.status.success(), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with(
            "warning: SUBMETRICS_THEME is not a setting of the service; it is not read\n"
        ),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_service_option_given_to_an_administration_command_is_refused() {
    let dir = data_dir();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new(binary());
        command.arg("--data-dir").arg(&dir).args(args);
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().expect("run")
    };
    // `--listen` after `accounts create` used to be taken and do nothing.
    let output = run(
        &["accounts", "create", "Second", "--listen", "0.0.0.0:9000"],
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: --listen is an option of the service; `accounts create` does not read it\n"
    );
    assert!(!dir.join("submetrics.db").exists(), "nothing was created");
    let output = run(&["--rate-limit", "5", "keys", "list"], &[]);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: --rate-limit is an option of the service; `keys list` does not read it\n"
    );
    // What the command reads is taken, and the service's settings in the
    // environment stay quiet.
    let output = run(
        &["--busy-timeout", "100", "accounts", "create", "Second"],
        &[("SUBMETRICS_RATE_LIMIT", "5")],
    );
    assert!(output.status.success(), "{output:?}");
    let output = run(
        &[
            "users",
            "invite",
            "ada@example.com",
            "--listen",
            "10.0.0.1:8443",
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains(": http://10.0.0.1:8443/app/#/invite/inv_"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}
