//! Records: data actions on every resource, bodies, exports and what they
//! read back to offline.

use crate::server::start;
use serde_json::{Value, json};

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
    // Without --body or fields, the passthrough sends no body, which an
    // endpoint that reads none would refuse.
    assert!(
        server.json(&["api", "POST", "/customers/A/resync"])["message"]
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
        "error: server answered 400: data_source ds: field `created`: is not a field of a data_source; its fields: id, name, type\n"
    );
    assert_eq!(
        server.json(&["data", "invoices", "list", "--limit", "2"])["result"]["count"],
        3
    );
    let of_a = server.json(&["data", "invoices", "list", "--customer", "A"]);
    let ids: Vec<&Value> = of_a["result"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["id"])
        .collect();
    assert_eq!(
        (&of_a["result"]["count"], ids),
        (&json!(2), vec![&json!("a1"), &json!("a2")])
    );
    assert_eq!(
        server.json(&["data", "plans", "list", "--source", "ds"])["result"]["count"],
        0
    );
    for (args, error) in [
        (
            &["data", "customers", "list", "--customer", "A"][..],
            "--customer applies to data invoices list",
        ),
        (
            &["data", "invoices", "list", "--source", "s"][..],
            "--source applies to data plans list",
        ),
    ] {
        let refused = server.run(args);
        assert_eq!(refused.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&refused.stderr),
            format!("error: {error}\n")
        );
    }
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
    // An export is CSV unless a format is asked for: every record (or
    // movement) in one JSON array, or a table.
    assert_eq!(
        csv(&["--format", "csv", "exports", "plans"]),
        csv(&["exports", "plans"])
    );
    assert_eq!(
        server.json(&["exports", "plans", "--format", "json"]),
        json!([{"id": "m", "name": "Monthly", "billing_freq": "month", "billing_freq_count": 1,
                "currency": "USD", "product_name": null, "data_source": null,
                "pricing_model": "licensed"}])
    );
    assert_eq!(
        csv(&["--format", "table", "exports", "plans"]),
        "\
id  name     billing_freq  billing_freq_count  currency  product_name  data_source  pricing_model
--  -------  ------------  ------------------  --------  ------------  -----------  -------------
m   Monthly  month                          1  USD                                  licensed
"
    );
    let movements = ["--date", "20240101-20240229", "--as-of", "2024-02-15"];
    assert_eq!(
        server.json(
            &[
                &["--format", "json", "exports", "movements"],
                &movements[..]
            ]
            .concat()
        ),
        server.json(&[&["reports", "movement-table"], &movements[..]].concat())["result"]["list"]
    );
    // A record export takes its list's parameters, which used to be dropped
    // (every customer's invoices came whatever `--customer` said).
    let header = csv(&["exports", "invoices"])
        .lines()
        .next()
        .map(str::to_string);
    let of_b = csv(&["exports", "invoices", "--customer", "B"]);
    assert_eq!(of_b.lines().next().map(str::to_string), header);
    let customers: Vec<&str> = of_b
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap_or(""))
        .collect();
    assert!(
        !customers.is_empty() && customers.iter().all(|c| *c == "B"),
        "{of_b}"
    );
    let refused = |args: &[&str], stderr: &str| {
        let out = server.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{args:?}");
    };
    refused(
        &["exports", "customers", "--since", "2024-01-01"],
        "error: server answered 400: query parameter `since`: this endpoint has no such parameter; its parameters: limit, offset\n",
    );
    refused(
        &["exports", "plans", "--limit", "1"],
        "error: --limit: an export reads every page; `data <resource> list` reads one\n",
    );
    refused(
        &["exports", "plans", "--source", "nosuch"],
        "error: server answered 404: data source `nosuch` does not exist\n",
    );
}

#[test]
fn list_filters_are_not_empty_and_name_what_exists() {
    let server = start();
    server.seed();
    let refused = |args: &[&str], stderr: &str| {
        let out = server.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{args:?}");
    };
    // An empty filter used to list everything.
    let empty = |option: &str| {
        format!("error: {option} has an empty value; give it one, or leave the option out\n")
    };
    refused(
        &["data", "invoices", "list", "--customer", ""],
        &empty("--customer"),
    );
    refused(&["data", "plans", "list", "--source="], &empty("--source"));
    refused(
        &["exports", "invoices", "--customer", " "],
        &empty("--customer"),
    );
    refused(&["reports", "mrr", "--plan", ""], &empty("--plan"));
    refused(
        &["import", "invoices", "--source", "", "x.jsonl"],
        &empty("--source"),
    );
    // An unknown data source is not found, as an unknown customer is (it
    // used to be an empty list of plans).
    refused(
        &["data", "invoices", "list", "--customer", "NOPE"],
        "error: server answered 404: customer `NOPE` does not exist\n",
    );
    refused(
        &["data", "plans", "list", "--source", "nosuch"],
        "error: server answered 404: data source `nosuch` does not exist\n",
    );
    server.json(&[
        "data",
        "data-sources",
        "create",
        "--body",
        r#"{"id": "billing", "name": "Billing"}"#,
    ]);
    assert_eq!(
        server.json(&["data", "plans", "list", "--source", "billing"])["result"]["count"],
        0
    );
    // No record, whose fields the client cannot know: no CSV at all, not a
    // bare line.
    let none = server.run(&["exports", "plans", "--source", "billing"]);
    assert!(none.status.success());
    assert_eq!(String::from_utf8_lossy(&none.stdout), "");
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
    // An update replaces the name and the plan list, so it names both: a
    // rename alone would have emptied the group.
    assert_eq!(
        server.json(&[
            "data",
            "plan-groups",
            "update",
            &id,
            "--body",
            r#"{"name": "Core plans", "plans": ["m"]}"#
        ]),
        json!({"success": true, "id": id})
    );
    let group = server.json(&["data", "plan-groups", "get", &id]);
    assert_eq!(
        (group["name"].clone(), group["plans"][0]["id"].clone()),
        (json!("Core plans"), json!("m"))
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
