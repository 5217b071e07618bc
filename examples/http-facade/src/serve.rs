//! Serving connections with limits: a cap on open connections (one over it
//! is answered `503` with `Retry-After` and closed, never left waiting), a
//! deadline for each request's head (which also closes a kept-alive
//! connection left idle), a deadline for each write to a client that does
//! not read, JSON bodies for the answers the HTTP layer gives on its own
//! (`400`, `414`, `431`), and a graceful stop: on SIGTERM or SIGINT the
//! service stops accepting, lets the requests under way finish, and returns.

use crate::error::ApiError;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// The limits a served connection is held to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once; one more is refused with a `503`.
    pub max_connections: usize,
    /// Time a client has to send a request's head, counted from when the
    /// service starts waiting for it: on a kept-alive connection, from
    /// the end of the previous answer, so this also closes idle
    /// connections.
    pub header_timeout: Duration,
    /// Time a write to the client may wait for it to read.
    pub write_timeout: Duration,
    /// Time the requests under way get to finish once a stop is asked for.
    pub drain_timeout: Duration,
}

/// The `Retry-After` of a connection refused for being over the cap.
const RETRY_AFTER_SECONDS: u64 = 1;
/// Refusals under way at once; a connection past them is closed unanswered.
const MAX_REFUSING: usize = 512;
/// How long a refusal waits to write its answer, and then reads what the
/// client sent so that closing does not reset the connection before the
/// client reads the answer.
const REFUSAL_GRACE: Duration = Duration::from_millis(200);

/// Serves `app` on `listener` within `limits` until `stop` completes, then
/// drains the connections (see [`Limits::drain_timeout`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: wait, go on.
                    eprintln!("warning: accepting a connection failed: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            if let Ok(permit) = Arc::clone(&refusing).try_acquire_owned() {
                tokio::spawn(async move {
                    refuse(stream, limits).await;
                    drop(permit);
                });
            }
            continue;
        };
        let io = TokioIo::new(Guarded::new(stream, limits.write_timeout));
        let connection = http.serve_connection(io, TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.drain_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        eprintln!(
            "warning: requests still under way after {} s were cut off",
            limits.drain_timeout.as_secs()
        );
    }
    Ok(())
}

/// Completes on the first SIGTERM or SIGINT.
pub async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// Answers a connection over the cap with a `503` and closes it. What the
/// client sent is read (briefly) before closing, so its answer is not lost
/// to a reset.
async fn refuse(mut stream: TcpStream, limits: Limits) {
    let refused = ApiError::Unavailable(format!(
        "the service has {} connections open, its limit; retry in {RETRY_AFTER_SECONDS} s",
        limits.max_connections
    ));
    let answer = raw_answer(refused, &[("retry-after", RETRY_AFTER_SECONDS.to_string())]);
    if tokio::time::timeout(REFUSAL_GRACE, stream.write_all(&answer))
        .await
        .is_err()
    {
        return;
    }
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(REFUSAL_GRACE, async {
        while let Ok(read) = stream.read(&mut sink).await {
            if read == 0 {
                break;
            }
        }
    })
    .await;
}

/// `error` as a whole HTTP/1.1 answer that closes the connection.
fn raw_answer(error: ApiError, headers: &[(&str, String)]) -> Vec<u8> {
    let status = error.status();
    let body = serde_json::to_vec(&error.body()).unwrap_or_default();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut answer = head.into_bytes();
    answer.extend_from_slice(&body);
    answer
}

/// The answer the HTTP layer writes by itself for a request it cannot
/// read, if `written` is one: its status line and no body. Those are
/// answered with the service's JSON error instead.
fn refusal_of(written: &[u8]) -> Option<ApiError> {
    // Answers and their bodies go through here too, in pieces of up to
    // megabytes: only a short head can be a refusal.
    if written.len() > REFUSAL_HEAD_BYTES || !written.starts_with(b"HTTP/1.1 4") {
        return None;
    }
    let head_end = written.windows(4).position(|w| w == b"\r\n\r\n")?;
    if head_end + 4 != written.len() {
        return None;
    }
    let head = std::str::from_utf8(&written[..head_end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.strip_prefix("HTTP/1.1 ")?.get(..3)?;
    let mut empty = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        if name.eq_ignore_ascii_case("content-type") {
            return None;
        }
        if name.eq_ignore_ascii_case("content-length") {
            empty = value.trim() == "0";
        }
    }
    if !empty {
        return None;
    }
    match status {
        "400" => Some(ApiError::bad_request(
            "the request is not valid HTTP/1.1 and could not be read",
        )),
        "414" => Some(ApiError::UriTooLong(
            "the request's path and query are over the limit of 65534 bytes".into(),
        )),
        "431" => Some(ApiError::HeadersTooLarge(
            "the request's head (its line and headers) is over the limit of about 400 KiB or 100 headers".into(),
        )),
        _ => None,
    }
}

/// The longest head [`refusal_of`] reads: the layer's refusals are a
/// status line and two short headers.
const REFUSAL_HEAD_BYTES: usize = 1024;

/// A client connection as the HTTP layer sees it, with two guards: the
/// answers the layer gives on its own get JSON bodies (see [`refusal_of`]),
/// and a write the client does not take within the write timeout fails the
/// connection.
struct Guarded {
    stream: TcpStream,
    write_timeout: Duration,
    /// Since when a write has been waiting for the client.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// An answer written in place of what the layer wrote, and how much of
    /// it is out.
    replacement: Option<(Vec<u8>, usize)>,
}

impl Guarded {
    fn new(stream: TcpStream, write_timeout: Duration) -> Guarded {
        Guarded {
            stream,
            write_timeout,
            stalled: None,
            replacement: None,
        }
    }

    /// Writes `buf` to the client, failing once it has waited for the
    /// client longer than the write timeout.
    fn write_guarded(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.guarded(cx, |stream, cx| stream.poll_write(cx, buf))
    }

    /// Runs `write` on the stream, failing once it has waited for the
    /// client longer than the write timeout.
    fn guarded(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match write(Pin::new(&mut self.stream), cx) {
            Poll::Ready(outcome) => {
                self.stalled = None;
                Poll::Ready(outcome)
            }
            Poll::Pending => {
                let timeout = self.write_timeout;
                let stalled = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                ready!(stalled.as_mut().poll(cx));
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client did not read its answer in time",
                )))
            }
        }
    }

    /// Writes out what is left of a replacement answer.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((answer, sent)) = self.replacement.take() {
            if sent == answer.len() {
                break;
            }
            let outcome = self.write_guarded(cx, &answer[sent..]);
            let written = match outcome {
                Poll::Pending => {
                    self.replacement = Some((answer, sent));
                    return Poll::Pending;
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(written)) => written,
            };
            self.replacement = Some((answer, sent + written));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_replacement(cx))?;
        if let Some(error) = refusal_of(buf) {
            self.replacement = Some((raw_answer(error, &[]), 0));
            // What the layer wrote counts as written; the replacement goes
            // out now and on the flush that follows.
            if let Poll::Ready(Err(error)) = self.poll_replacement(cx) {
                return Poll::Ready(Err(error));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        self.write_guarded(cx, buf)
    }

    /// Pieces go out in one call, as the stream takes them (a long answer
    /// is not copied into one buffer first); a single piece is a plain
    /// write, which a refusal always is.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut pieces = bufs.iter().filter(|piece| !piece.is_empty());
        match (pieces.next(), pieces.next()) {
            (None, _) => Poll::Ready(Ok(0)),
            (Some(only), None) => self.poll_write(cx, only),
            _ => {
                ready!(self.poll_replacement(cx))?;
                self.guarded(cx, |stream, cx| stream.poll_write_vectored(cx, bufs))
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::refusal_of;

    #[test]
    fn only_the_layers_own_bodiless_refusals_are_replaced() {
        let own = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Wed, 25 Nov 2026 10:00:00 GMT\r\n\r\n";
        assert_eq!(refusal_of(own).map(|e| e.status().as_u16()), Some(431));
        let uri = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(refusal_of(uri).map(|e| e.status().as_u16()), Some(414));
        let service = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(refusal_of(service).is_none());
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}";
        assert!(refusal_of(with_body).is_none());
        assert!(refusal_of(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        // A head past a refusal's length is an answer's, however it ends.
        let long = [
            &uri[..uri.len() - 2],
            b"x-pad: ",
            &b"x".repeat(1024),
            b"\r\n\r\n",
        ]
        .concat();
        assert!(refusal_of(&long).is_none());
    }
}
