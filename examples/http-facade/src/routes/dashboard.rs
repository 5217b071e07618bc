//! The dashboard: a small front end (plain ES modules and the vendored
//! uPlot chart library, `examples/http-facade/dashboard/assets/`) embedded
//! in the binary, so it works with no internet and no files beside the
//! binary. It lives under `/app/` (`GET /` is the API's own); `/app`
//! redirects there. Views are URL fragments (`/app/#/mrr?interval=week`),
//! so every view is a bookmarkable URL and the server needs one page.
//!
//! The pages call the same endpoints as any API client, authenticated by
//! the session cookie (see [`crate::session`]); nothing here computes a
//! figure. These routes are not API endpoints, so they are not in the
//! route table or the OpenAPI document.

use crate::state::AppState;
use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use std::sync::Arc;

/// One embedded file: its path under `/app/`, media type and bytes.
struct Asset {
    path: &'static str,
    media_type: &'static str,
    bytes: &'static [u8],
}

macro_rules! assets {
    ($(($path:literal, $media_type:expr)),* $(,)?) => {
        &[$(Asset {
            path: $path,
            media_type: $media_type,
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/dashboard/assets/", $path)),
        }),*]
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const ASSETS: &[Asset] = assets![
    ("index.html", "text/html; charset=utf-8"),
    ("app.css", CSS),
    ("app.js", JS),
    ("api.js", JS),
    ("format.js", JS),
    ("charts.js", JS),
    ("controls.js", JS),
    ("periods.js", JS),
    ("pages/login.js", JS),
    ("pages/overview.js", JS),
    ("pages/mrr.js", JS),
    ("pages/retention.js", JS),
    ("pages/leads.js", JS),
    ("pages/cashflow.js", JS),
    ("pages/customers.js", JS),
    ("pages/settings.js", JS),
    ("vendor/uPlot.iife.min.js", JS),
    ("vendor/uPlot.min.css", CSS),
    ("vendor/uPlot.LICENSE", "text/plain; charset=utf-8"),
    ("favicon.svg", "image/svg+xml"),
];

/// Only this origin's scripts, styles, images and requests; no framing.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; \
     style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'self'";

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/app", get(|| async { Redirect::permanent("/app/") }))
        .route("/app/", get(|| async { asset("index.html") }))
        .route(
            "/app/{*path}",
            get(|axum::extract::Path(path): axum::extract::Path<String>| async move {
                asset(&path)
            }),
        )
}

fn asset(path: &str) -> Response {
    let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
        return crate::error::ApiError::NotFound(format!("no dashboard file /app/{path}"))
            .into_response();
    };
    let mut response = (StatusCode::OK, asset.bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.media_type),
    );
    // Assets change with the binary: always revalidate.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}
