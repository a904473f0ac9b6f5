//! A small HTTP/1.1 client and server over `std::net` and rustls: keep-alive,
//! `TCP_NODELAY` on both sides, Content-Length and chunked bodies, every read
//! bounded in size and time (docs/CONTRACT.md, bad input).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection, StreamOwned};

/// A request body over this gets 413.
pub const MAX_BODY: usize = 8 << 20;
/// A response body (or stdio line) over this is refused.
pub const MAX_RESPONSE: usize = 64 << 20;
/// A request or response head over this gets 431 (or is refused).
pub const MAX_HEAD: usize = 64 << 10;
/// A header or body that stalls this long closes the connection.
pub const STALL: Duration = Duration::from_secs(10);
/// How long a kept-alive connection may wait for its next request.
pub const IDLE: Duration = Duration::from_secs(120);

/// One connection's byte stream: plain TCP or TLS over it.
pub enum Stream {
    Plain(TcpStream),
    ServerTls(Box<StreamOwned<ServerConnection, TcpStream>>),
    ClientTls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::ServerTls(s) => &s.sock,
            Stream::ClientTls(s) => &s.sock,
        }
    }

    /// Ends the connection so that the peer reads everything sent before (a TLS
    /// alert, a last response): close_notify when `notify`, half-close, then
    /// a short drain of what the peer still sends, so the close is no reset.
    pub fn close(mut self, notify: bool) {
        if notify {
            match &mut self {
                Stream::ServerTls(s) => {
                    s.conn.send_close_notify();
                    let _ = s.flush();
                }
                Stream::ClientTls(s) => {
                    s.conn.send_close_notify();
                    let _ = s.flush();
                }
                Stream::Plain(_) => {}
            }
        }
        let tcp = self.tcp();
        let _ = tcp.shutdown(Shutdown::Write);
        let until = Instant::now() + Duration::from_millis(500);
        let mut raw = tcp;
        let mut sink = [0u8; 16 << 10];
        let mut drained = 0usize;
        while drained < (1 << 20) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || raw.set_read_timeout(Some(left)).is_err() {
                break;
            }
            match raw.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::ServerTls(s) => s.read(buf),
            Stream::ClientTls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::ServerTls(s) => s.write(buf),
            Stream::ClientTls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::ServerTls(s) => s.flush(),
            Stream::ClientTls(s) => s.flush(),
        }
    }
}

/// Why a read stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// the peer closed before the message ended
    Eof,
    /// over the size bound
    TooLarge,
    /// malformed framing (a bad chunk size, say)
    Framing(String),
    /// stalled past the time bound
    Timeout,
    Io(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Eof => f.write_str("the connection closed before the message ended"),
            ReadError::TooLarge => f.write_str("the message is too large"),
            ReadError::Framing(s) => write!(f, "malformed message: {s}"),
            ReadError::Timeout => f.write_str("timed out"),
            ReadError::Io(s) => f.write_str(s),
        }
    }
}

fn io_error(e: &io::Error) -> ReadError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ReadError::Timeout,
        io::ErrorKind::UnexpectedEof => ReadError::Eof,
        _ => ReadError::Io(e.to_string()),
    }
}

/// A buffered connection.
pub struct Conn {
    pub stream: Stream,
    buf: Vec<u8>,
    pos: usize,
    /// every read and write must end by then (a client's exchange)
    deadline: Option<Instant>,
}

impl Conn {
    pub fn new(stream: Stream) -> Conn {
        Conn {
            stream,
            buf: Vec::with_capacity(8192),
            pos: 0,
            deadline: None,
        }
    }

    fn arm(&self) -> Result<(), ReadError> {
        if let Some(d) = self.deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ReadError::Timeout);
            }
            let tcp = self.stream.tcp();
            let _ = tcp.set_read_timeout(Some(left));
            let _ = tcp.set_write_timeout(Some(left));
        }
        Ok(())
    }

    fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
    }

    /// Reads more bytes into the buffer; Ok(0) at EOF.
    fn fill(&mut self) -> Result<usize, ReadError> {
        self.arm()?;
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let mut chunk = [0u8; 16 << 10];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_error(&e)),
            }
        }
    }

    /// Waits for the first byte of the next message: false at a clean EOF.
    pub fn wait_for_data(&mut self) -> Result<bool, ReadError> {
        if !self.buffered().is_empty() {
            return Ok(true);
        }
        Ok(self.fill()? > 0)
    }

    /// The head of the next message (up to and without the empty line); None at
    /// EOF before any byte. Leading empty lines are skipped.
    pub fn read_head(&mut self, max: usize) -> Result<Option<Vec<u8>>, ReadError> {
        let mut scanned = 0;
        loop {
            if scanned == 0 {
                while self.buffered().starts_with(b"\r\n") || self.buffered().starts_with(b"\n") {
                    let n = if self.buffered()[0] == b'\r' { 2 } else { 1 };
                    self.consume(n);
                }
            }
            let data = self.buffered();
            let mut found = None;
            for i in scanned..data.len() {
                if data[i] == b'\n' {
                    if data[i + 1..].starts_with(b"\n") {
                        found = Some((i + 1, i + 2));
                        break;
                    }
                    if data[i + 1..].starts_with(b"\r\n") {
                        found = Some((i + 1, i + 3));
                        break;
                    }
                }
            }
            if let Some((len, used)) = found {
                if len > max {
                    return Err(ReadError::TooLarge);
                }
                let head = data[..len].to_vec();
                self.consume(used);
                return Ok(Some(head));
            }
            if data.len() > max {
                return Err(ReadError::TooLarge);
            }
            scanned = data.len().saturating_sub(3);
            let started = !data.is_empty();
            if self.fill()? == 0 {
                return if started {
                    Err(ReadError::Eof)
                } else {
                    Ok(None)
                };
            }
        }
    }

    /// One line (without CRLF or LF), at most `max` bytes.
    pub fn read_line(&mut self, max: usize) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(i) = self.buffered().iter().position(|&b| b == b'\n') {
                let mut line = self.buffered()[..i].to_vec();
                self.consume(i + 1);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if self.buffered().len() > max {
                return Err(ReadError::TooLarge);
            }
            if self.fill()? == 0 {
                return Err(ReadError::Eof);
            }
        }
    }

    /// Exactly n bytes appended to out.
    pub fn read_exact_into(&mut self, mut n: usize, out: &mut Vec<u8>) -> Result<(), ReadError> {
        while n > 0 {
            if self.buffered().is_empty() && self.fill()? == 0 {
                return Err(ReadError::Eof);
            }
            let take = n.min(self.buffered().len());
            out.extend_from_slice(&self.buffered()[..take]);
            self.consume(take);
            n -= take;
        }
        Ok(())
    }

    /// Everything until EOF, at most max bytes.
    pub fn read_to_close(&mut self, max: usize, out: &mut Vec<u8>) -> Result<(), ReadError> {
        loop {
            let data = self.buffered().to_vec();
            out.extend_from_slice(&data);
            let n = data.len();
            self.consume(n);
            if out.len() > max {
                return Err(ReadError::TooLarge);
            }
            if self.fill()? == 0 {
                return Ok(());
            }
        }
    }

    /// Reads a body of the given framing, at most max bytes.
    pub fn read_body(&mut self, framing: Framing, max: usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::new();
        match framing {
            Framing::Empty => {}
            Framing::Length(n) => {
                if n > max as u64 {
                    return Err(ReadError::TooLarge);
                }
                out.reserve(n as usize);
                self.read_exact_into(n as usize, &mut out)?;
            }
            Framing::UntilClose => self.read_to_close(max, &mut out)?,
            Framing::Chunked => loop {
                let line = self.read_line(4096).map_err(|e| match e {
                    ReadError::TooLarge => ReadError::Framing("chunk size line too long".into()),
                    e => e,
                })?;
                let size = chunk_size(&line)?;
                if size == 0 {
                    let mut trailers = 0;
                    loop {
                        let t = self.read_line(MAX_HEAD)?;
                        trailers += t.len() + 2;
                        if t.is_empty() {
                            break;
                        }
                        if trailers > MAX_HEAD {
                            return Err(ReadError::TooLarge);
                        }
                    }
                    break;
                }
                if size > (max - out.len()) as u64 {
                    return Err(ReadError::TooLarge);
                }
                self.read_exact_into(size as usize, &mut out)?;
                if !self.read_line(2)?.is_empty() {
                    return Err(ReadError::Framing("chunk data not followed by CRLF".into()));
                }
            },
        }
        Ok(out)
    }

    /// Writes all bytes and flushes them to the socket.
    pub fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.arm()
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "timed out"))?;
        self.stream.write_all(data)?;
        self.stream.flush()
    }
}

/// A chunk-size line: hex digits, then optional extensions after `;`.
fn chunk_size(line: &[u8]) -> Result<u64, ReadError> {
    let text = String::from_utf8_lossy(line);
    let digits = text
        .split(';')
        .next()
        .unwrap_or("")
        .trim_matches(|c| c == ' ' || c == '\t');
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ReadError::Framing(format!("bad chunk size {:?}", digits)));
    }
    u64::from_str_radix(digits, 16).map_err(|_| ReadError::TooLarge)
}

/// How a message body is delimited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Framing {
    Empty,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Header fields: names lower-cased, values trimmed, in order.
#[derive(Debug, Clone, Default)]
pub struct Headers(pub Vec<(String, String)>);

impl Headers {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
    fn has_token(&self, name: &str, token: &str) -> bool {
        self.all(name)
            .iter()
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// The body framing of a message with these headers (Err: malformed).
    pub fn framing(&self, request: bool) -> Result<Framing, String> {
        let te = self.all("transfer-encoding");
        let cl = self.all("content-length");
        if !te.is_empty() {
            if !cl.is_empty() {
                return Err("both Transfer-Encoding and Content-Length".into());
            }
            let codings: Vec<String> = te
                .iter()
                .flat_map(|v| v.split(','))
                .map(|t| t.trim().to_ascii_lowercase())
                .collect();
            if codings == ["chunked"] {
                return Ok(Framing::Chunked);
            }
            if !request && codings.last().map(String::as_str) != Some("chunked") {
                return Ok(Framing::UntilClose);
            }
            return Err(format!(
                "unsupported Transfer-Encoding {}",
                codings.join(", ")
            ));
        }
        if cl.is_empty() {
            return Ok(if request {
                Framing::Empty
            } else {
                Framing::UntilClose
            });
        }
        let mut length: Option<u64> = None;
        for v in cl.iter().flat_map(|v| v.split(',')) {
            let v = v.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("bad Content-Length {v:?}"));
            }
            let n: u64 = v.parse().unwrap_or(u64::MAX);
            if length.is_some_and(|l| l != n) {
                return Err("conflicting Content-Length values".into());
            }
            length = Some(n);
        }
        Ok(Framing::Length(length.unwrap_or(0)))
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The header lines after the start line.
fn parse_fields(lines: &[&str]) -> Result<Headers, String> {
    let mut h = Vec::new();
    for line in lines {
        if line.starts_with(' ') || line.starts_with('\t') {
            return Err("obsolete line folding".into());
        }
        let (name, value) = line
            .split_once(':')
            .ok_or("a header line without a colon")?;
        if !is_token(name) {
            return Err(format!("bad header name {name:?}"));
        }
        h.push((
            name.to_ascii_lowercase(),
            value.trim_matches(|c| c == ' ' || c == '\t').to_string(),
        ));
    }
    Ok(Headers(h))
}

fn split_lines(head: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(head)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A request's head.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub target: String,
    /// the target's path, without the query
    pub path: String,
    pub minor: u8,
    pub headers: Headers,
}

impl Request {
    pub fn parse(head: &[u8]) -> Result<Request, String> {
        let lines = split_lines(head);
        let first = lines.first().ok_or("empty request")?;
        let mut parts = first.split(' ');
        let (method, target, version) =
            match (parts.next(), parts.next(), parts.next(), parts.next()) {
                (Some(m), Some(t), Some(v), None) => (m, t, v),
                _ => return Err(format!("bad request line {first:?}")),
            };
        if !is_token(method) || target.is_empty() {
            return Err(format!("bad request line {first:?}"));
        }
        let minor = match version {
            "HTTP/1.1" => 1,
            "HTTP/1.0" => 0,
            _ => return Err(format!("unsupported version {version:?}")),
        };
        let rest: Vec<&str> = lines[1..].iter().map(String::as_str).collect();
        let headers = parse_fields(&rest)?;
        let path = target.split(['?', '#']).next().unwrap_or("").to_string();
        Ok(Request {
            method: method.into(),
            target: target.into(),
            path,
            minor,
            headers,
        })
    }

    /// Whether the client asked to close after this exchange.
    pub fn wants_close(&self) -> bool {
        if self.minor == 0 {
            !self.headers.has_token("connection", "keep-alive")
        } else {
            self.headers.has_token("connection", "close")
        }
    }
}

/// A response to write.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// close the connection after this response
    pub close: bool,
    /// run once the response is on the wire (POST /shutdown)
    pub after_send: Option<fn()>,
}

impl Response {
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: vec![],
            body: vec![],
            close: false,
            after_send: None,
        }
    }

    /// Close the connection without answering (a stalled or broken body).
    pub fn hang_up() -> Response {
        Response::new(0).closing()
    }
    pub fn json(status: u16, v: &serde_json::Value) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: ahp_sdk::json::encode(v).into_bytes(),
            close: false,
            after_send: None,
        }
    }
    pub fn closing(mut self) -> Response {
        self.close = true;
        self
    }
    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (n, v) in &self.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        if self.close {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        let mut data = out.into_bytes();
        data.extend_from_slice(&self.body);
        data
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

/// Why a request body could not be had.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyError {
    /// answer with this status, then close
    Status(u16),
    /// close without an answer (a stall, a broken connection)
    Close,
}

/// A request's body, read only when the handler asks (after authentication).
pub struct Body<'a> {
    conn: &'a mut Conn,
    req: &'a Request,
    state: BodyState,
}

#[derive(PartialEq)]
enum BodyState {
    Unread,
    Read,
    Failed,
}

impl Body<'_> {
    /// The whole body: 413 over MAX_BODY, 400 for malformed framing.
    pub fn read(&mut self) -> Result<Vec<u8>, BodyError> {
        if self.state != BodyState::Unread {
            return Err(BodyError::Close);
        }
        self.state = BodyState::Failed;
        let framing = self
            .req
            .headers
            .framing(true)
            .map_err(|_| BodyError::Status(400))?;
        if let Framing::Length(n) = framing {
            if n > MAX_BODY as u64 {
                return Err(BodyError::Status(413));
            }
        }
        if framing != Framing::Empty
            && self.req.minor == 1
            && self
                .req
                .headers
                .get("expect")
                .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
            && self.conn.send(b"HTTP/1.1 100 Continue\r\n\r\n").is_err()
        {
            return Err(BodyError::Close);
        }
        match self.conn.read_body(framing, MAX_BODY) {
            Ok(b) => {
                self.state = BodyState::Read;
                Ok(b)
            }
            Err(ReadError::TooLarge) => Err(BodyError::Status(413)),
            Err(ReadError::Framing(_)) => Err(BodyError::Status(400)),
            Err(_) => Err(BodyError::Close),
        }
    }

    /// Exactly `n` bytes of a `Content-Length` body, whatever its framing
    /// headers say (the caller checked them): `ReadError::Eof` when the sender
    /// closed (or half-closed) before sending them all, `Timeout` when it stalled.
    pub fn read_length(&mut self, n: usize) -> Result<Vec<u8>, ReadError> {
        if self.state != BodyState::Unread {
            return Err(ReadError::Eof);
        }
        self.state = BodyState::Failed;
        let mut out = Vec::with_capacity(n);
        self.conn.read_exact_into(n, &mut out)?;
        self.state = BodyState::Read;
        Ok(out)
    }

    /// Waits up to `limit` for the peer to close the connection (or half-close
    /// it): true once it has. Bytes the peer sends meanwhile are left unread.
    pub fn peer_closed(&self, limit: Duration) -> bool {
        use std::os::unix::io::AsRawFd;
        let mut fd = libc::pollfd {
            fd: self.conn.stream.tcp().as_raw_fd(),
            events: libc::POLLRDHUP,
            revents: 0,
        };
        let ms = limit.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: poll(2) on one pollfd that lives on this stack frame.
        let rc = unsafe { libc::poll(&mut fd, 1, ms) };
        rc > 0 && fd.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
    }

    /// Whether the connection can carry another request after this one.
    fn reusable(&self) -> bool {
        match self.state {
            BodyState::Read => true,
            BodyState::Failed => false,
            BodyState::Unread => matches!(
                self.req.headers.framing(true),
                Ok(Framing::Empty) | Ok(Framing::Length(0))
            ),
        }
    }
}

/// Answers requests; runs on the connection's own thread and may block.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, req: &Request, body: &mut Body) -> Response;
}

/// Binds 127.0.0.1 on an ephemeral port (std listens with a backlog of 128).
pub fn listen() -> io::Result<TcpListener> {
    TcpListener::bind("127.0.0.1:0")
}

/// Serves the listener on a thread of its own, one thread per connection.
pub fn serve(
    listener: TcpListener,
    tls: Option<Arc<ServerConfig>>,
    handler: Arc<dyn Handler>,
    name: &'static str,
) {
    std::thread::spawn(move || {
        for accepted in listener.incoming() {
            match accepted {
                Ok(tcp) => {
                    let (tls, handler) = (tls.clone(), handler.clone());
                    let spawned = std::thread::Builder::new()
                        .stack_size(8 << 20)
                        .spawn(move || connection(tcp, tls, handler, name));
                    if let Err(e) = spawned {
                        crate::log(
                            "server",
                            &format!("{name}: cannot start a connection thread: {e}"),
                        );
                    }
                }
                Err(e) => {
                    crate::log("server", &format!("{name}: accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
    });
}

fn connection(
    tcp: TcpStream,
    tls: Option<Arc<ServerConfig>>,
    handler: Arc<dyn Handler>,
    name: &str,
) {
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(STALL));
    let _ = tcp.set_write_timeout(Some(STALL));
    let secure = tls.is_some();
    let stream = match tls {
        None => Stream::Plain(tcp),
        Some(cfg) => match ServerConnection::new(cfg) {
            Ok(c) => Stream::ServerTls(Box::new(StreamOwned::new(c, tcp))),
            Err(e) => {
                crate::log("server", &format!("{name}: TLS setup failed: {e}"));
                return;
            }
        },
    };
    let mut conn = Conn::new(stream);
    let mut first = true;
    loop {
        if !first {
            let _ = conn.stream.tcp().set_read_timeout(Some(IDLE));
        }
        match conn.wait_for_data() {
            Ok(true) => {}
            Ok(false) => return conn.stream.close(secure),
            Err(e) => {
                if first && secure {
                    crate::log("server", &format!("{name}: TLS connection refused: {e}"));
                }
                return conn.stream.close(false);
            }
        }
        let _ = conn.stream.tcp().set_read_timeout(Some(STALL));
        let head = match conn.read_head(MAX_HEAD) {
            Ok(Some(h)) => h,
            Ok(None) => return conn.stream.close(secure),
            Err(ReadError::TooLarge) => {
                let _ = conn.send(&Response::new(431).closing().bytes());
                return conn.stream.close(secure);
            }
            Err(_) => return conn.stream.close(false),
        };
        let req = match Request::parse(&head) {
            Ok(r) => r,
            Err(why) => {
                crate::log("server", &format!("{name}: bad request: {why}"));
                let status = if why.starts_with("unsupported version") {
                    505
                } else {
                    400
                };
                let _ = conn.send(&Response::new(status).closing().bytes());
                return conn.stream.close(secure);
            }
        };
        let (response, reusable) = {
            let mut body = Body {
                conn: &mut conn,
                req: &req,
                state: BodyState::Unread,
            };
            let r = handler.handle(&req, &mut body);
            let reusable = body.reusable();
            (r, reusable)
        };
        if response.status == 0 {
            return conn.stream.close(false);
        }
        let close = response.close || !reusable || req.wants_close();
        let response = if close { response.closing() } else { response };
        let sent = conn.send(&response.bytes());
        if let Some(then) = response.after_send {
            then();
        }
        if sent.is_err() {
            return conn.stream.close(false);
        }
        if close {
            return conn.stream.close(secure);
        }
        first = false;
    }
}

/// An http(s) URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Url {
    pub https: bool,
    pub host: String,
    pub port: u16,
    /// path and query, starting with `/`
    pub path: String,
}

impl Url {
    pub fn parse(s: &str) -> Result<Url, String> {
        let (https, rest) = if let Some(r) = s.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = s.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(format!("{s:?} is not an http(s) URL"));
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let path = path.split('#').next().unwrap_or("");
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };
        if authority.contains('@') {
            return Err(format!("{s:?}: user information is not supported"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, p) = v6
                .split_once(']')
                .ok_or_else(|| format!("{s:?}: bad host"))?;
            (h.to_string(), p.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(format!("{s:?}: no host"));
        }
        let port = match port {
            Some(p) => p.parse::<u16>().map_err(|_| format!("{s:?}: bad port"))?,
            None => {
                if https {
                    443
                } else {
                    80
                }
            }
        };
        Ok(Url {
            https,
            host,
            port,
            path,
        })
    }

    fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{host}:{}", self.port)
    }

    /// The URL with another path.
    pub fn with_path(&self, path: &str) -> Url {
        Url {
            path: path.to_string(),
            ..self.clone()
        }
    }

    /// The intercept URL of an endpoint: itself when its path ends in
    /// `/intercept`, else with `/intercept` appended to its path.
    pub fn intercept(&self) -> Url {
        let (path, query) = match self.path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (self.path.as_str(), None),
        };
        if path.ends_with("/intercept") {
            return self.clone();
        }
        let mut p = format!("{}/intercept", path.trim_end_matches('/'));
        if let Some(q) = query {
            p = format!("{p}?{q}");
        }
        self.with_path(&p)
    }
}

/// A response a client received.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Headers,
    pub body: Vec<u8>,
}

/// An HTTP/1.1 client of one origin over one keep-alive connection (opened
/// again only when the server closed it); redirects are never followed.
pub struct Client {
    origin: Url,
    tls: Option<Arc<ClientConfig>>,
    conn: Option<Conn>,
    pub timeout: Duration,
}

impl Client {
    /// A client of the URL's origin (TLS for https, with this config).
    pub fn new(origin: &Url, tls: Option<Arc<ClientConfig>>, timeout: Duration) -> Client {
        Client {
            origin: origin.clone(),
            tls,
            conn: None,
            timeout,
        }
    }

    fn connect(&self, deadline: Instant) -> Result<Conn, String> {
        let target = format!("{}:{}", self.origin.host, self.origin.port);
        let addrs: Vec<_> = (self.origin.host.as_str(), self.origin.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {target}: {e}"))?
            .collect();
        let mut last = format!("cannot resolve {target}");
        let mut tcp = None;
        for a in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("connecting to {target} timed out"));
            }
            match TcpStream::connect_timeout(&a, left) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = format!("cannot connect to {target}: {e}"),
            }
        }
        let tcp = tcp.ok_or(last)?;
        let _ = tcp.set_nodelay(true);
        let stream = if self.origin.https {
            let cfg = self.tls.clone().ok_or("an https URL needs a TLS config")?;
            let name = ServerName::try_from(self.origin.host.clone())
                .map_err(|e| format!("bad server name {}: {e}", self.origin.host))?;
            let mut c =
                ClientConnection::new(cfg, name).map_err(|e| format!("TLS setup failed: {e}"))?;
            let mut tcp = tcp;
            while c.is_handshaking() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(format!("TLS handshake with {target} timed out"));
                }
                let _ = tcp.set_read_timeout(Some(left));
                let _ = tcp.set_write_timeout(Some(left));
                if let Err(e) = c.complete_io(&mut tcp) {
                    return Err(format!("TLS handshake with {target} failed: {e}"));
                }
            }
            Stream::ClientTls(Box::new(StreamOwned::new(c, tcp)))
        } else {
            Stream::Plain(tcp)
        };
        Ok(Conn::new(stream))
    }

    /// Whether a kept connection is still open (no EOF, alert or stray bytes waiting).
    fn still_open(conn: &mut Conn) -> bool {
        if !conn.buffered().is_empty() {
            return false;
        }
        let tcp = conn.stream.tcp().try_clone();
        let Ok(tcp) = tcp else { return false };
        if tcp.set_nonblocking(true).is_err() {
            return false;
        }
        let open = match &mut conn.stream {
            Stream::Plain(s) => {
                let mut b = [0u8; 1];
                matches!(s.peek(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
            Stream::ClientTls(s) => loop {
                let s = &mut **s;
                match s.conn.read_tls(&mut s.sock) {
                    Ok(0) => break false,
                    Ok(_) => match s.conn.process_new_packets() {
                        Ok(state)
                            if state.peer_has_closed() || state.plaintext_bytes_to_read() > 0 =>
                        {
                            break false
                        }
                        Ok(_) => continue,
                        Err(_) => break false,
                    },
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
                    Err(_) => break false,
                }
            },
            Stream::ServerTls(_) => false,
        };
        let _ = tcp.set_nonblocking(false);
        open
    }

    /// One request; the answer whatever its status. Err: no answer could be had.
    pub fn request(
        &mut self,
        method: &str,
        url: &Url,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Answer, String> {
        let deadline = Instant::now() + self.timeout;
        let mut conn = match self.conn.take() {
            Some(mut c) => {
                if Client::still_open(&mut c) {
                    c
                } else {
                    c.stream.close(false);
                    self.connect(deadline)?
                }
            }
            None => self.connect(deadline)?,
        };
        conn.deadline = Some(deadline);
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\n",
            url.path,
            url.host_header()
        );
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut data = head.into_bytes();
        data.extend_from_slice(body);
        if let Err(e) = conn.send(&data) {
            // a refusal may have come first (a TLS alert): read it to name it
            let mut why = format!("sending the request failed: {e}");
            if let Err(ReadError::Io(alert)) = conn.fill() {
                why = format!("{why} ({alert})");
            }
            conn.stream.close(false);
            return Err(why);
        }
        let answer = loop {
            let head = match conn.read_head(MAX_HEAD) {
                Ok(Some(h)) => h,
                Ok(None) => {
                    conn.stream.close(false);
                    return Err("the server closed the connection without answering".into());
                }
                Err(e) => {
                    conn.stream.close(false);
                    return Err(format!("reading the response failed: {e}"));
                }
            };
            let (status, minor, headers) = match parse_status(&head) {
                Ok(x) => x,
                Err(e) => {
                    conn.stream.close(false);
                    return Err(format!("malformed response: {e}"));
                }
            };
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            let framing = if method == "HEAD" || status == 204 || status == 304 {
                Ok(Framing::Empty)
            } else {
                headers.framing(false)
            };
            let framing = match framing {
                Ok(f) => f,
                Err(e) => {
                    conn.stream.close(false);
                    return Err(format!("malformed response: {e}"));
                }
            };
            let body = match conn.read_body(framing, MAX_RESPONSE) {
                Ok(b) => b,
                Err(e) => {
                    conn.stream.close(false);
                    return Err(format!("reading the response body failed: {e}"));
                }
            };
            let keep = framing != Framing::UntilClose
                && if minor == 0 {
                    headers.has_token("connection", "keep-alive")
                } else {
                    !headers.has_token("connection", "close")
                };
            if keep {
                conn.deadline = None;
                self.conn = Some(conn);
            } else {
                conn.stream.close(false);
            }
            break Answer {
                status,
                headers,
                body,
            };
        };
        Ok(answer)
    }

    /// Closes the kept connection.
    pub fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            c.stream.close(true);
        }
    }
}

/// A response head's status and header fields.
pub fn parse_response_head(head: &[u8]) -> Result<(u16, Headers), String> {
    parse_status(head).map(|(status, _, headers)| (status, headers))
}

fn parse_status(head: &[u8]) -> Result<(u16, u8, Headers), String> {
    let lines = split_lines(head);
    let first = lines.first().ok_or("empty response")?;
    let mut parts = first.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let minor = match version {
        "HTTP/1.1" => 1,
        "HTTP/1.0" => 0,
        _ => return Err(format!("bad status line {first:?}")),
    };
    let code = parts.next().unwrap_or("");
    if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad status line {first:?}"));
    }
    let rest: Vec<&str> = lines[1..].iter().map(String::as_str).collect();
    Ok((code.parse().unwrap_or(0), minor, parse_fields(&rest)?))
}

/// `application/x-www-form-urlencoded` of the pairs.
pub fn form(pairs: &[(&str, &str)]) -> String {
    fn enc(s: &str) -> String {
        let mut out = String::new();
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    }
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("https://127.0.0.1:8443").unwrap();
        assert_eq!(u.intercept().path, "/intercept");
        let u = Url::parse("http://127.0.0.1:1/base/").unwrap();
        assert_eq!(u.intercept().path, "/base/intercept");
        let u = Url::parse("http://127.0.0.1:1/intercept").unwrap();
        assert_eq!(u.intercept().path, "/intercept");
        assert!(Url::parse("ftp://x").is_err());
        assert_eq!(Url::parse("http://[::1]:80/x").unwrap().host, "::1");
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size(b"1a;ext=1").unwrap(), 26);
        assert!(matches!(chunk_size(b"-1"), Err(ReadError::Framing(_))));
        assert!(matches!(chunk_size(b"zz"), Err(ReadError::Framing(_))));
        assert!(matches!(chunk_size(b""), Err(ReadError::Framing(_))));
    }

    #[test]
    fn requests() {
        let r =
            Request::parse(b"POST /x?y=1 HTTP/1.1\r\nAuthorization: a\r\nauthorization:  b \r\n")
                .unwrap();
        assert_eq!(r.path, "/x");
        assert_eq!(r.headers.all("authorization"), vec!["a", "b"]);
        assert!(Request::parse(b"POST /x HTTP/1.1\r\nBad Name: a\r\n").is_err());
        assert!(Request::parse(b"POST /x HTTP/1.1\r\nA: a\r\n folded\r\n").is_err());
        let h = Headers(vec![
            ("transfer-encoding".into(), "chunked".into()),
            ("content-length".into(), "3".into()),
        ]);
        assert!(h.framing(true).is_err());
    }

    #[test]
    fn forms() {
        assert_eq!(form(&[("a", "b c"), ("d", "e&f=")]), "a=b+c&d=e%26f%3D");
    }
}
