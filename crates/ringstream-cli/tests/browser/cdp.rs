//! A minimal client of the Chrome DevTools protocol, over the browser's
//! own WebSocket (its `DevTools listening on ws://…` address). Pages are
//! driven in the flattened session mode: a target is made with
//! `Target.createTarget` and attached with `Target.attachToTarget`
//! (`flatten: true`); its commands and events then travel on the same
//! connection, marked with its `sessionId`.
//!
//! The WebSocket is tokio-tungstenite's (already a dev-dependency, for the
//! wire tests). The protocol on top is written here: a full CDP crate
//! compiles for about a minute on CI's two cores, for the few calls this
//! test makes.
//!
//! One thread owns the connection, on a current-thread tokio runtime of
//! its own: it reads the browser's messages, hands them on, and writes
//! the commands the callers queue. The callers stay synchronous.
//!
//! A command is `{id, method, params, sessionId}`; its answer, matched by
//! `id`, holds a `result` or an `error`. Every call waits at most the
//! client's timeout, and fails at once when the connection ends.
//! Messages without an `id` are events, handed to the listeners of their
//! session on the connection's thread, in the order they came. Pings are
//! answered by tungstenite as it reads.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::sync::{mpsc as queue, oneshot};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// An event of the protocol: its `method` (`Domain.event`) and `params`.
pub struct Event {
    pub method: String,
    pub params: Value,
}

/// What a page's events are handed to.
type Listener = Arc<dyn Fn(&Event) + Send + Sync>;

/// A command's answer: its `result`, or the protocol's error message.
type Answer = Result<Value, String>;

/// The state the connection's thread and the callers share.
struct Shared {
    /// The commands to send, in order, to the connection's thread.
    outgoing: queue::UnboundedSender<String>,
    next_id: AtomicU64,
    calls: Mutex<Calls>,
    /// Each session's listeners, by `sessionId`.
    listeners: Mutex<HashMap<String, Vec<Listener>>>,
    /// How long a call may wait for its answer.
    timeout: Duration,
}

/// The calls waiting for their answer, or why no answer can come.
#[derive(Default)]
struct Calls {
    waiting: HashMap<u64, (String, mpsc::Sender<Answer>)>,
    /// Set once the connection has ended.
    ended: Option<String>,
}

/// A connection to the browser. Dropping it ends the connection's thread,
/// which closes the socket.
pub struct Browser {
    shared: Arc<Shared>,
    /// Dropped with the browser: the connection's thread then stops.
    _shutdown: oneshot::Sender<()>,
}

/// A page (a tab) of the browser, attached in its own session.
pub struct Page {
    shared: Arc<Shared>,
    session_id: String,
    /// Its lifecycle events, as (`loaderId`, `name`).
    lifecycle: mpsc::Receiver<(String, String)>,
    /// How long [`Page::navigate`] waits for the page's `load`.
    load_timeout: Duration,
}

impl Browser {
    /// Connects to the browser's DevTools address `url` (`ws://…`). The
    /// TCP connection and the opening handshake are given at most
    /// `timeout`, and so is every call after them.
    pub fn connect(url: &str, timeout: Duration) -> Result<Browser, String> {
        if !url.starts_with("ws://") {
            return Err(format!("not a ws:// address: {url}"));
        }
        let request = url
            .into_client_request()
            .map_err(|e| format!("not a WebSocket address: {url}: {e}"))?;
        let host = request.uri().host().unwrap_or_default();
        let authority = format!("{host}:{}", request.uri().port_u16().unwrap_or(80));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("start a runtime: {e}"))?;
        let opening = async {
            let stream = TcpStream::connect(&authority)
                .await
                .map_err(|e| format!("connect {authority}: {e}"))?;
            stream
                .set_nodelay(true)
                .map_err(|e| format!("set up the socket: {e}"))?;
            let (socket, _response) = tokio_tungstenite::client_async(request, stream)
                .await
                .map_err(|e| format!("the WebSocket handshake: {e}"))?;
            Ok::<_, String>(socket)
        };
        let socket = runtime
            .block_on(async { tokio::time::timeout(timeout, opening).await })
            .map_err(|_| format!("no WebSocket connection within {} s", timeout.as_secs()))??;

        let (outgoing, queued) = queue::unbounded_channel();
        let (shutdown, stop) = oneshot::channel();
        let shared = Arc::new(Shared {
            outgoing,
            next_id: AtomicU64::new(1),
            calls: Mutex::new(Calls::default()),
            listeners: Mutex::new(HashMap::new()),
            timeout,
        });
        let running = shared.clone();
        thread::spawn(move || {
            let why = runtime.block_on(running.run(socket, queued, stop));
            // The waiting calls fail now: dropping their senders wakes them.
            let mut calls = running.calls();
            calls.ended = Some(why);
            calls.waiting.clear();
        });
        Ok(Browser {
            shared,
            _shutdown: shutdown,
        })
    }

    /// `Browser.getVersion`'s `product`, such as `Chrome/124.0.6367.60`.
    pub fn product(&self) -> Result<String, String> {
        let version = self.shared.call(None, "Browser.getVersion", json!({}))?;
        version["product"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("Browser.getVersion without a product: {version}"))
    }

    /// A new tab on `about:blank`, attached, with its `Page` domain and
    /// lifecycle events enabled. [`Page::navigate`] waits at most
    /// `load_timeout` for a page's `load`.
    pub fn new_page(&self, load_timeout: Duration) -> Result<Page, String> {
        let target =
            self.shared
                .call(None, "Target.createTarget", json!({ "url": "about:blank" }))?;
        let target_id = &target["targetId"];
        let attached = self.shared.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        let session_id = attached["sessionId"]
            .as_str()
            .ok_or_else(|| format!("Target.attachToTarget without a sessionId: {attached}"))?
            .to_owned();
        let (tx, lifecycle) = mpsc::channel();
        let page = Page {
            shared: self.shared.clone(),
            session_id,
            lifecycle,
            load_timeout,
        };
        page.on_event(move |event| {
            if event.method == "Page.lifecycleEvent" {
                let field = |name: &str| event.params[name].as_str().unwrap_or_default().to_owned();
                let _ = tx.send((field("loaderId"), field("name")));
            }
        });
        page.call("Page.enable", json!({}))?;
        page.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))?;
        Ok(page)
    }
}

impl Page {
    /// Calls `method` with `params` in this page's session; its `result`.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        self.shared.call(Some(&self.session_id), method, params)
    }

    /// Hands each event of this page to `listener`, from now on.
    pub fn on_event(&self, listener: impl Fn(&Event) + Send + Sync + 'static) {
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(self.session_id.clone())
            .or_default()
            .push(Arc::new(listener));
    }

    /// Loads `url` (`Page.navigate`) and waits for the new document's
    /// `load` lifecycle event.
    pub fn navigate(&self, url: &str) -> Result<(), String> {
        let started = Instant::now();
        let navigated = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(error) = navigated["errorText"].as_str() {
            return Err(format!("Page.navigate: {error}"));
        }
        let loader = navigated["loaderId"]
            .as_str()
            .ok_or_else(|| format!("Page.navigate without a loaderId: {navigated}"))?;
        loop {
            let left = self.load_timeout.saturating_sub(started.elapsed());
            match self.lifecycle.recv_timeout(left) {
                Ok((id, name)) if id == loader && name == "load" => return Ok(()),
                Ok(_) => {}
                Err(_) => {
                    return Err(format!(
                        "no load event within {} s",
                        self.load_timeout.as_secs()
                    ))
                }
            }
        }
    }

    /// Evaluates `expression` (`Runtime.evaluate`, the value returned as
    /// JSON); its value, or the exception it threw.
    pub fn evaluate(&self, expression: &str) -> Result<Value, String> {
        let evaluated = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": false }),
        )?;
        if let Some(details) = evaluated.get("exceptionDetails") {
            let description = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("an exception");
            return Err(format!("threw {description}"));
        }
        Ok(evaluated["result"]["value"].clone())
    }
}

impl Shared {
    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `method` with `params` (in `session`, or to the browser) and
    /// waits at most `self.timeout` for its answer.
    fn call(&self, session: Option<&str>, method: &str, params: Value) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut command = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            command["sessionId"] = session.into();
        }
        let (tx, rx) = mpsc::channel();
        {
            let mut calls = self.calls();
            if let Some(why) = &calls.ended {
                return Err(format!("{method}: {why}"));
            }
            calls.waiting.insert(id, (method.to_owned(), tx));
        }
        if self.outgoing.send(command.to_string()).is_err() {
            self.calls().waiting.remove(&id);
            let why = self.calls().ended.clone().unwrap_or_default();
            return Err(format!("{method}: {why}"));
        }
        match rx.recv_timeout(self.timeout) {
            Ok(answer) => answer,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.calls().waiting.remove(&id);
                Err(format!(
                    "{method}: no answer within {} s",
                    self.timeout.as_secs()
                ))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let why = self.calls().ended.clone().unwrap_or_default();
                Err(format!("{method}: {why}"))
            }
        }
    }

    /// The connection, until it ends or `stop` fires (its [`Browser`] was
    /// dropped): the browser's messages dispatched, the queued commands
    /// sent. Why it ended.
    async fn run(
        &self,
        mut socket: WebSocketStream<TcpStream>,
        mut queued: queue::UnboundedReceiver<String>,
        mut stop: oneshot::Receiver<()>,
    ) -> String {
        loop {
            tokio::select! {
                message = socket.next() => match message {
                    Some(Ok(Message::Text(text))) => self.dispatch(text.as_str()),
                    Some(Ok(Message::Close(_))) => {
                        return "the browser closed the connection".to_owned()
                    }
                    // Pings are answered by tungstenite itself; binary
                    // messages and pongs are passed over.
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return format!("the connection ended: {e}"),
                    None => return "the connection ended".to_owned(),
                },
                command = queued.recv() => {
                    let Some(command) = command else {
                        return "the client was dropped".to_owned();
                    };
                    if let Err(e) = socket.send(Message::text(command)).await {
                        return format!("the connection ended: send: {e}");
                    }
                }
                _ = &mut stop => return "the client was dropped".to_owned(),
            }
        }
    }

    /// One message from the browser: an answer to its call, or an event to
    /// its session's listeners.
    fn dispatch(&self, text: &str) {
        let Ok(mut message) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if let Some(id) = message["id"].as_u64() {
            let Some((method, tx)) = self.calls().waiting.remove(&id) else {
                // Answered past its timeout.
                return;
            };
            let answer = match message.get("error") {
                Some(error) => Err(format!(
                    "{method}: {} ({})",
                    error["message"].as_str().unwrap_or("an error"),
                    error["code"]
                )),
                None => Ok(message["result"].take()),
            };
            let _ = tx.send(answer);
            return;
        }
        let (Some(method), Some(session)) =
            (message["method"].as_str(), message["sessionId"].as_str())
        else {
            return;
        };
        let method = method.to_owned();
        // Called outside the lock: a listener may take locks of its own.
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(session)
            .cloned()
            .unwrap_or_default();
        let event = Event {
            method,
            params: message["params"].take(),
        };
        for listener in &listeners {
            listener(&event);
        }
    }
}
