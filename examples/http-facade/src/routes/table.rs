//! The route table: every endpoint is registered once, with its method,
//! path, handler and documentation, so the router and the OpenAPI document
//! come from the same list and cannot disagree.

use crate::openapi::Doc;
use crate::state::AppState;
use axum::Router;
use axum::handler::Handler;
use axum::routing::{self, MethodRouter};
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
        // An endpoint that answers in one media type refuses a request
        // whose `Accept` refuses it; one that offers formats weighs the
        // header itself.
        let handler = if doc.offers_formats() {
            handler
        } else {
            let media = crate::openapi::operation(method, path)
                .map_or("application/json", |operation| operation.media_type);
            handler.route_layer(axum::middleware::from_fn(move |request, next| {
                super::accept::answers_only(media, request, next)
            }))
        };
        // Who calls is checked before the handler reads anything.
        let access = doc.access;
        let handler = handler.route_layer(axum::middleware::from_fn(move |request, next| {
            crate::auth::authorize(access, request, next)
        }));
        // Routing a path again adds the method to it.
        self.router = self.router.route(path, handler);
        self.endpoints.push(Endpoint { method, path, doc });
        self
    }

    pub fn merge(mut self, other: Routes) -> Routes {
        self.router = self.router.merge(other.router);
        self.endpoints.extend(other.endpoints);
        self
    }

    pub fn into_parts(self) -> (Router<Arc<AppState>>, Vec<Endpoint>) {
        (self.router, self.endpoints)
    }
}
