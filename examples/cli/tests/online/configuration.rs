//! Where the key and the address come from: flag, environment, config
//! file, default.

use crate::server::{KEY, start};
use serde_json::{Value, json};

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
    // `account` with the key and the address from the config file only.
    let account_by_file = || {
        server
            .command()
            .env_remove("SUBMETRICS_API_URL")
            .env_remove("SUBMETRICS_API_KEY")
            .arg("account")
            .output()
            .expect("run")
    };
    let from_file = account_by_file();
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
    // A field it does not read, or one that is not text, is an error: a
    // misspelt `url` used to leave the client on the default address.
    for (config_text, error) in [
        (
            json!({"api_key": KEY, "url": server.url}),
            "unknown field `url`; the fields are api_key and api_url",
        ),
        (
            json!({"api_url": 8080}),
            "field `api_url` must be text, not 8080",
        ),
        (json!([KEY]), "must be a JSON object of api_key and api_url"),
    ] {
        std::fs::write(&config, config_text.to_string()).expect("config");
        let refused = account_by_file();
        assert_eq!(
            String::from_utf8_lossy(&refused.stderr),
            format!("error: {}: {error}\n", config.display())
        );
    }
}
