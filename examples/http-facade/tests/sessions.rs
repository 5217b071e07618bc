//! Team logins over HTTP: invitations, login, session cookies, CSRF,
//! roles, logout and the login rate limit.

mod common;

use common::{OWNER_KEY, Server};
use serde_json::{Value, json};

/// Sends a request with headers; returns status, Set-Cookie and JSON body.
fn send(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, Option<String>, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{}{}", server.base, path))
        .header("Content-Type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(body.map(|b| b.to_string()).unwrap_or_default())
        .expect("request");
    let mut response = agent.run(request).expect("the server answers");
    let cookie = response
        .headers()
        .get("set-cookie")
        .map(|v| v.to_str().unwrap_or("").to_string());
    let text = response.body_mut().read_to_string().unwrap_or_default();
    (
        response.status().as_u16(),
        cookie,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

fn owner(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let auth = format!("Bearer {OWNER_KEY}");
    let (status, _, body) = send(server, method, path, &[("Authorization", &auth)], body);
    (status, body)
}

/// Invites `email` with `role` and accepts; returns the session cookie
/// (`name=value`) and the CSRF token.
fn invite_and_accept(server: &Server, email: &str, role: &str) -> (String, String) {
    let (status, invitation) = owner(
        server,
        "POST",
        "/account/team",
        Some(json!({"email": email, "role": role})),
    );
    assert_eq!(status, 201, "{invitation}");
    assert_eq!(invitation["status"], "pending");
    let token = invitation["token"].as_str().expect("token");
    assert_eq!(invitation["path"], format!("/app/#/invite/{token}"));
    let (status, _, shown) = send(server, "GET", &format!("/invitations/{token}"), &[], None);
    assert_eq!(
        (status, &shown["email"], &shown["role"]),
        (200, &json!(email), &json!(role))
    );
    let (status, cookie, login) = send(
        server,
        "POST",
        &format!("/invitations/{token}"),
        &[],
        Some(json!({"password": "a long password"})),
    );
    assert_eq!(status, 201, "{login}");
    let cookie = cookie.expect("a session cookie");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(cookie.contains("Max-Age=604800"), "{cookie}");
    let pair = cookie.split(';').next().expect("pair").to_string();
    (
        pair,
        login["csrf_token"].as_str().expect("csrf").to_string(),
    )
}

#[test]
fn an_invited_admin_logs_in_and_writes_with_its_csrf_token_only() {
    let server = Server::start();
    let (cookie, csrf) = invite_and_accept(&server, "ada@example.test", "admin");
    let plan = json!({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"});
    let (status, _, body) = send(&server, "GET", "/session", &[("Cookie", &cookie)], None);
    assert_eq!(status, 200);
    assert_eq!(body["user"]["email"], "ada@example.test");
    assert_eq!(body["csrf_token"], json!(csrf));
    let (status, _, body) = send(
        &server,
        "POST",
        "/data/plans",
        &[("Cookie", &cookie)],
        Some(plan.clone()),
    );
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or("")
            .contains("x-csrf-token"),
        "{body}"
    );
    let headers = [("Cookie", cookie.as_str()), ("X-CSRF-Token", csrf.as_str())];
    let (status, _, body) = send(&server, "POST", "/data/plans", &headers, Some(plan.clone()));
    assert_eq!(status, 200, "{body}");
    let foreign = [
        ("Cookie", cookie.as_str()),
        ("X-CSRF-Token", csrf.as_str()),
        ("Origin", "http://evil.test"),
    ];
    assert_eq!(
        send(&server, "POST", "/data/plans", &foreign, Some(plan)).0,
        403
    );
    // The team shows the real user with its last login.
    let (_, team) = owner(&server, "GET", "/account/team", None);
    let ada = team["result"]["list"]
        .as_array()
        .expect("list")
        .iter()
        .find(|m| m["email"] == "ada@example.test")
        .expect("ada")
        .clone();
    assert_eq!(
        (ada["role"].as_str(), ada["status"].as_str()),
        (Some("admin"), Some("active"))
    );
    assert!(ada["last_login"].is_string());
    let (_, _, profile) = send(&server, "GET", "/profile", &[("Cookie", &cookie)], None);
    assert_eq!(profile["email"], "ada@example.test");
    assert_eq!(profile["accounts"][0]["role"], "admin");
    // Logging out ends the session.
    let (status, cleared, _) = send(&server, "DELETE", "/session", &headers, None);
    assert_eq!(status, 200);
    assert!(cleared.unwrap_or_default().contains("Max-Age=0"));
    assert_eq!(
        send(
            &server,
            "GET",
            "/reports/summary",
            &[("Cookie", &cookie)],
            None
        )
        .0,
        401
    );
}

#[test]
fn a_readonly_session_logs_out() {
    let server = Server::start();
    let (cookie, csrf) = invite_and_accept(&server, "rex@example.test", "readonly");
    let headers = [("Cookie", cookie.as_str()), ("X-CSRF-Token", csrf.as_str())];
    // The only write a readonly user makes; it still needs the CSRF token.
    let (status, _, body) = send(&server, "DELETE", "/session", &[("Cookie", &cookie)], None);
    assert_eq!(status, 403, "{body}");
    let (status, cleared, body) = send(&server, "DELETE", "/v1/session", &headers, None);
    assert_eq!(status, 200, "{body}");
    assert!(cleared.unwrap_or_default().contains("Max-Age=0"));
    assert_eq!(
        send(&server, "GET", "/reports/summary", &headers, None).0,
        401
    );
}

#[test]
fn a_readonly_session_reads_but_cannot_write_and_a_disabled_user_is_out() {
    let server = Server::start();
    let (cookie, csrf) = invite_and_accept(&server, "rita@example.test", "readonly");
    let headers = [("Cookie", cookie.as_str()), ("X-CSRF-Token", csrf.as_str())];
    assert_eq!(
        send(&server, "GET", "/reports/summary", &headers, None).0,
        200
    );
    let plan = json!({"id": "m", "name": "Monthly", "interval": "month", "currency": "USD"});
    for path in ["/data/plans", "/v1/data/plans"] {
        let (status, _, body) = send(&server, "POST", path, &headers, Some(plan.clone()));
        assert_eq!(
            (status, body),
            (
                403,
                json!({"error": format!("user `rita@example.test` is readonly: it cannot POST {path}"),
                       "code": "forbidden"})
            )
        );
    }
    assert_eq!(send(&server, "GET", "/account/team", &headers, None).0, 403);
    let (_, session) = (0, send(&server, "GET", "/session", &headers, None).2);
    let id = session["user"]["id"].as_str().expect("id").to_string();
    assert_eq!(
        owner(&server, "DELETE", &format!("/account/team/{id}"), None).0,
        200
    );
    assert_eq!(
        send(&server, "GET", "/reports/summary", &headers, None).0,
        401
    );
    let (status, _, body) = send(
        &server,
        "POST",
        "/session",
        &[],
        Some(json!({"email": "rita@example.test", "password": "a long password"})),
    );
    assert_eq!(status, 403, "{body}");
}

#[test]
fn invitations_are_used_once_and_logins_are_rate_limited() {
    let server = Server::start();
    let (status, invitation) = owner(
        &server,
        "POST",
        "/account/team",
        Some(json!({"email": "bob@example.test"})),
    );
    assert_eq!(status, 201);
    assert_eq!(invitation["role"], "readonly");
    let path = format!(
        "/invitations/{}",
        invitation["token"].as_str().expect("token")
    );
    let short = send(
        &server,
        "POST",
        &path,
        &[],
        Some(json!({"password": "short"})),
    );
    assert_eq!(short.0, 400, "{}", short.2);
    let accept = json!({"password": "a long password"});
    assert_eq!(
        send(&server, "POST", &path, &[], Some(accept.clone())).0,
        201
    );
    assert_eq!(send(&server, "POST", &path, &[], Some(accept)).0, 409);
    assert_eq!(
        send(&server, "GET", "/invitations/inv_unknown", &[], None).0,
        404
    );
    let again = owner(
        &server,
        "POST",
        "/account/team",
        Some(json!({"email": "BOB@example.test"})),
    );
    assert_eq!(again.0, 409);
    let wrong = json!({"email": "bob@example.test", "password": "not the password"});
    for _ in 0..5 {
        assert_eq!(
            send(&server, "POST", "/session", &[], Some(wrong.clone())).0,
            401
        );
    }
    let right = json!({"email": "bob@example.test", "password": "a long password"});
    let (status, _, body) = send(&server, "POST", "/session", &[], Some(right));
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["code"], "rate_limited");
}

#[test]
fn the_dashboard_is_served_under_app_with_a_strict_policy() {
    let server = Server::start();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut page = agent
        .get(format!("{}/app/", server.base))
        .call()
        .expect("answer");
    assert_eq!(page.status().as_u16(), 200);
    let policy = page.headers().get("content-security-policy").expect("csp");
    assert!(policy.to_str().unwrap_or("").contains("default-src 'self'"));
    let html = page.body_mut().read_to_string().expect("html");
    assert!(html.contains("<script type=\"module\" src=\"app.js\">"));
    for asset in ["app.js", "vendor/uPlot.iife.min.js", "pages/overview.js"] {
        let response = agent
            .get(format!("{}/app/{asset}", server.base))
            .call()
            .expect("answer");
        assert_eq!(response.status().as_u16(), 200, "{asset}");
    }
    assert_eq!(
        agent
            .get(format!("{}/app/nope.js", server.base))
            .call()
            .expect("answer")
            .status()
            .as_u16(),
        404
    );
}
