//! The route table: every endpoint is registered once, with its method,
//! path, handler and documentation, so the router and the OpenAPI document
//! come from the same list and cannot disagree.

use crate::error::ApiError;
use crate::extract::query_names;
use crate::openapi::Doc;
use crate::state::AppState;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::handler::Handler;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{self, MethodRouter};
use hyper::body::Body as _;
use std::pin::Pin;
use std::sync::Arc;

/// One served endpoint as documented.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    pub method: &'static str,
    pub path: &'static str,
    pub doc: Doc,
}

/// A router that records what it serves.
pub struct Routes {
    router: Router<Arc<AppState>>,
    endpoints: Vec<Endpoint>,
    /// Each endpoint's handler as routed, its checks included.
    handlers: Vec<(&'static str, MethodRouter<Arc<AppState>>)>,
}

macro_rules! method {
    ($name:ident) => {
        pub fn $name<H, T>(self, path: &'static str, handler: H, doc: Doc) -> Routes
        where
            H: Handler<T, Arc<AppState>>,
            T: 'static,
        {
            self.add(stringify!($name), path, routing::$name(handler), doc)
        }
    };
}

impl Routes {
    pub fn new() -> Routes {
        Routes {
            router: Router::new(),
            endpoints: Vec::new(),
            handlers: Vec::new(),
        }
    }

    method!(get);
    method!(post);
    method!(put);
    method!(delete);

    fn add(
        mut self,
        method: &'static str,
        path: &'static str,
        handler: MethodRouter<Arc<AppState>>,
        doc: Doc,
    ) -> Routes {
        let described = crate::openapi::operation(method, path);
        let reads_body = described
            .as_ref()
            .is_none_or(|operation| operation.request.is_some());
        // An endpoint that answers in one media type refuses a request
        // whose `Accept` refuses it; one that offers formats weighs the
        // header itself.
        let handler = if doc.offers_formats() {
            handler
        } else {
            let media = described
                .as_ref()
                .map_or("application/json", |operation| operation.media_type);
            handler.route_layer(axum::middleware::from_fn(move |request, next| {
                super::accept::answers_only(media, request, next)
            }))
        };
        // A body sent to an endpoint that reads none is refused, except on
        // a path that answers `Missing external_id` whatever is sent.
        let handler = if reads_body || doc.missing_id {
            handler
        } else {
            handler.route_layer(axum::middleware::from_fn(no_body))
        };
        // A query parameter the endpoint does not read is refused, unless
        // it reads further ones of its own, which its handler checks; one
        // given empty is refused on every endpoint.
        let handler = handler.route_layer(axum::middleware::from_fn(move |request, next| {
            query_checked(doc, request, next)
        }));
        // Who calls is checked before the handler reads anything.
        let access = doc.access;
        let handler = handler.route_layer(axum::middleware::from_fn(move |request, next| {
            crate::auth::authorize(access, request, next)
        }));
        // Routing a path again adds the method to it.
        self.router = self.router.route(path, handler.clone());
        self.endpoints.push(Endpoint { method, path, doc });
        self.handlers.push((path, handler));
        self
    }

    pub fn merge(mut self, other: Routes) -> Routes {
        self.router = self.router.merge(other.router);
        self.endpoints.extend(other.endpoints);
        self.handlers.extend(other.handlers);
        self
    }

    /// The methods of `path` as the table routes them, with the same
    /// checks, to serve at another path too (`/v1/` as `/v1`): a path
    /// routed by hand would skip them.
    pub fn served(&self, path: &str) -> MethodRouter<Arc<AppState>> {
        self.handlers
            .iter()
            .filter(|(routed, _)| *routed == path)
            .fold(MethodRouter::new(), |all, (_, handler)| {
                all.merge(handler.clone())
            })
    }

    pub fn into_parts(self) -> (Router<Arc<AppState>>, Vec<Endpoint>) {
        (self.router, self.endpoints)
    }
}

/// Runs the request if its query names only parameters `doc` declares
/// (any, for an endpoint that checks its own), each once and none empty;
/// else answers 400 naming the first other one.
async fn query_checked(doc: Doc, request: Request, next: Next) -> Response {
    let checked = request.uri().query().map_or(Ok(()), |query| {
        if !doc.free_query {
            undeclared_refused(query, doc)?;
        }
        empty_refused(query)
    });
    match checked {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

/// Runs the request if its body is empty: declared with no length or a
/// `Content-Length` of 0, or chunked with no bytes. Any byte is a 400 at
/// once, before the handler runs, since nothing in the body would be read;
/// a chunked body is read up to its first byte, within the body timeout.
async fn no_body(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > 0) {
        return refused_body().into_response();
    }
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let deadline = request
        .extensions()
        .get::<Arc<AppState>>()
        .map_or(crate::state::DEFAULT_BODY_TIMEOUT, |state| {
            state.body_timeout()
        });
    let (parts, mut body) = request.into_parts();
    let read = tokio::time::timeout(deadline, async {
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame = frame.map_err(|error| {
                ApiError::bad_request(format!("the body could not be read: {error}"))
            })?;
            if frame.data_ref().is_some_and(|data| !data.is_empty()) {
                return Err(refused_body());
            }
        }
        Ok(())
    })
    .await;
    match read {
        Ok(Ok(())) => next.run(Request::from_parts(parts, Body::empty())).await,
        Ok(Err(error)) => error.into_response(),
        Err(_) => ApiError::BodyTimeout(format!(
            "the body did not arrive within {} s",
            deadline.as_secs_f64()
        ))
        .into_response(),
    }
}

fn refused_body() -> ApiError {
    ApiError::bad_request("this endpoint reads no body; send the request without one")
}

/// A parameter given empty (`customer=`, or `customer` alone) would read
/// as absent and filter nothing: a form's unset field more likely than a
/// choice, so it is refused, naming it.
fn empty_refused(query: &str) -> Result<(), ApiError> {
    match crate::extract::blank_parameter(query) {
        None => Ok(()),
        Some(name) => Err(ApiError::bad_field(
            &name,
            format!(
                "query parameter `{name}`: is empty; give a value, or leave the parameter out for its default"
            ),
        )),
    }
}

fn undeclared_refused(query: &str, doc: Doc) -> Result<(), ApiError> {
    let names = query_names(query)?;
    let known: Vec<&str> = doc.query_names().collect();
    match names.iter().find(|name| !known.contains(&name.as_str())) {
        None => Ok(()),
        Some(unknown) if known.is_empty() => Err(ApiError::bad_field(
            unknown,
            format!("query parameter `{unknown}`: this endpoint takes no query parameters"),
        )),
        Some(unknown) => Err(ApiError::bad_field(
            unknown,
            format!(
                "query parameter `{unknown}`: this endpoint has no such parameter; its parameters: {}",
                known.join(", ")
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(query: &str, doc: Doc) -> String {
        match undeclared_refused(query, doc) {
            Ok(()) => String::new(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn a_query_names_only_declared_parameters_once() {
        let page = Doc::key("A list").query(crate::openapi::PAGE);
        assert_eq!(refusal("limit=5&offset=10", page), "");
        assert_eq!(refusal("limit=5&&", page), "");
        assert_eq!(
            refusal("limit=5&sort=name", page),
            "query parameter `sort`: this endpoint has no such parameter; its parameters: limit, offset"
        );
        assert_eq!(
            refusal("limit=5&limit=6", page),
            "query parameter `limit` is given more than once; give it once"
        );
        assert_eq!(
            refusal("x%20y=1", Doc::key("One record")),
            "query parameter `x y`: this endpoint takes no query parameters"
        );
        let movements = Doc::key("Movements").query(&["as_of", "format/movements"]);
        assert_eq!(refusal("format=arrow&as_of=2024-01-01", movements), "");
        assert_eq!(
            refusal("format%2Fmovements=arrow", movements),
            "query parameter `format/movements`: this endpoint has no such parameter; its parameters: as_of, format"
        );
    }
}
