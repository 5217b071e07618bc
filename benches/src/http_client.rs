//! A light HTTP/1.1 client for the load generator: one kept-alive connection
//! per simulated client, every client a task on one thread. The load
//! generator shares the machine's cores with the service it measures, so
//! its clients should take as little of them as they can; a blocking client
//! per OS thread took more CPU per post than the server did.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// One connection to the service, sending requests one after another.
pub struct Connection {
    sender: SendRequest<Full<Bytes>>,
    host: HeaderValue,
    authorization: HeaderValue,
}

impl Connection {
    /// Connects to `base` (`http://HOST:PORT`) and sends `key` as the
    /// bearer token of every request.
    pub async fn open(base: &str, key: &str) -> Result<Connection, String> {
        let authority = base.strip_prefix("http://").unwrap_or(base);
        let stream = TcpStream::connect(authority)
            .await
            .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        Ok(Connection {
            sender,
            host: HeaderValue::from_str(authority).map_err(|e| e.to_string())?,
            authorization: HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|e| e.to_string())?,
        })
    }

    /// Posts a JSON body to `path` and answers the response's status once
    /// its body is read, or 0 if the exchange failed.
    pub async fn post(&mut self, path: &str, body: Bytes) -> u16 {
        self.send(Method::POST, path, body, "application/json")
            .await
    }

    /// [`Connection::post`] of a body of another `content_type`.
    pub async fn post_as(&mut self, path: &str, body: Bytes, content_type: &'static str) -> u16 {
        self.send(Method::POST, path, body, content_type).await
    }

    /// Gets `path` and answers the status once the body is read, or 0.
    pub async fn get(&mut self, path: &str) -> u16 {
        self.get_sized(path).await.0
    }

    /// [`Connection::get`], with the length of the body read.
    pub async fn get_sized(&mut self, path: &str) -> (u16, usize) {
        self.exchange(Method::GET, path, Bytes::new(), "application/json")
            .await
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Bytes,
        content_type: &'static str,
    ) -> u16 {
        self.exchange(method, path, body, content_type).await.0
    }

    /// Sends a request and reads the whole answer: its status and the
    /// length of its body, or `(0, 0)` if the exchange failed.
    async fn exchange(
        &mut self,
        method: Method,
        path: &str,
        body: Bytes,
        content_type: &'static str,
    ) -> (u16, usize) {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.host.clone())
            .header(AUTHORIZATION, self.authorization.clone());
        if !body.is_empty() {
            request = request.header(CONTENT_TYPE, content_type);
        }
        let Ok(request) = request.body(Full::new(body)) else {
            return (0, 0);
        };
        if self.sender.ready().await.is_err() {
            return (0, 0);
        }
        let Ok(response) = self.sender.send_request(request).await else {
            return (0, 0);
        };
        let status = response.status().as_u16();
        // The whole body is read, so the connection serves the next request.
        match response.into_body().collect().await {
            Ok(body) => (status, body.to_bytes().len()),
            Err(_) => (0, 0),
        }
    }
}
