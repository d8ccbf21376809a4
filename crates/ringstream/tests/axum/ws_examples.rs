//! axum 0.8's WebSocket examples, copied with their `use` lines pointed at
//! `ringstream::ws` and served by `ringstream::server::serve`, driven over
//! loopback by an independent client (tokio-tungstenite): the echo of
//! `examples/websockets` and the chat of `examples/chat`.
//!
//! Each example sits in a module of its own; the comment at its top lists
//! every line that differs from axum's.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as TsCloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame as TsCloseFrame;
use tokio_tungstenite::tungstenite::Message as TsMessage;
use tokio_tungstenite::WebSocketStream;

/// axum 0.8's `examples/websockets/src/main.rs`, the server.
///
/// Differences from axum's file, line by line:
/// - the `use` lines: `axum::extract::ws::{..}` and
///   `axum::extract::ws::CloseFrame` are `ringstream::ws::{..}`, and
///   `futures::{..}` is `futures_util::{..}` (the crate the tests have);
///   the `axum_extra::TypedHeader`, `tower_http` and `tracing_subscriber`
///   imports are gone with what used them (below);
/// - in `handle_socket`, `axum::extract::ws::close_code::NORMAL` (a path,
///   not a `use`) is `ringstream::ws::close_code::NORMAL`;
/// - `ws_handler` takes the user agent from the `HeaderMap` instead of
///   axum-extra's `Option<TypedHeader<headers::UserAgent>>` (axum-extra is
///   no dependency of these tests);
/// - `main` is `serve`: the app is the `/ws` route alone (no `ServeDir` of
///   the browser client's assets, no `TraceLayer`, no tracing subscriber),
///   and `axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())`
///   is `ringstream::server::serve(listener, app)`: ringstream gives every
///   request `ConnectInfo<SocketAddr>` itself.
///
/// `ws_handler`, `handle_socket` and `process_message` are otherwise
/// axum's, comments included.
mod websockets {
    use axum::{body::Bytes, response::IntoResponse, routing::any, Router};
    use ringstream::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};

    use std::net::SocketAddr;
    use std::ops::ControlFlow;

    //allows to extract the IP of connecting user
    use axum::extract::connect_info::ConnectInfo;
    use ringstream::ws::CloseFrame;

    //allows to split the websocket stream into separate TX and RX branches
    use futures_util::{sink::SinkExt, stream::StreamExt};

    pub async fn serve(listener: tokio::net::TcpListener) {
        // build our application with some routes
        let app = Router::new().route("/ws", any(ws_handler));

        // run it with ringstream
        ringstream::server::serve(listener, app).await.unwrap();
    }

    /// The handler for the HTTP request (this gets called when the HTTP request lands at the start
    /// of websocket negotiation). After this completes, the actual switching from HTTP to
    /// websocket protocol will occur.
    /// This is the last point where we can extract TCP/IP metadata such as IP address of the client
    /// as well as things from HTTP headers such as user-agent of the browser etc.
    async fn ws_handler(
        ws: WebSocketUpgrade,
        headers: http::HeaderMap,
        ConnectInfo(addr): ConnectInfo<SocketAddr>,
    ) -> impl IntoResponse {
        let user_agent = if let Some(user_agent) = headers.get(http::header::USER_AGENT) {
            String::from_utf8_lossy(user_agent.as_bytes()).into_owned()
        } else {
            String::from("Unknown browser")
        };
        println!("`{user_agent}` at {addr} connected.");
        // finalize the upgrade process by returning upgrade callback.
        // we can customize the callback by sending additional info such as address.
        ws.on_upgrade(move |socket| handle_socket(socket, addr))
    }

    /// Actual websocket statemachine (one will be spawned per connection)
    async fn handle_socket(mut socket: WebSocket, who: SocketAddr) {
        // send a ping (unsupported by some browsers) just to kick things off and get a response
        if socket
            .send(Message::Ping(Bytes::from_static(&[1, 2, 3])))
            .await
            .is_ok()
        {
            println!("Pinged {who}...");
        } else {
            println!("Could not send ping {who}!");
            // no Error here since the only thing we can do is to close the connection.
            // If we can not send messages, there is no way to salvage the statemachine anyway.
            return;
        }

        // receive single message from a client (we can either receive or send with socket).
        // this will likely be the Pong for our Ping or a hello message from client.
        // waiting for message from a client will block this task, but will not block other client's
        // connections.
        if let Some(msg) = socket.recv().await {
            if let Ok(msg) = msg {
                if process_message(msg, who).is_break() {
                    return;
                }
            } else {
                println!("client {who} abruptly disconnected");
                return;
            }
        }

        // Since each client gets individual statemachine, we can pause handling
        // when necessary to wait for some external event (in this case illustrated by sleeping).
        // Waiting for this client to finish getting its greetings does not prevent other clients from
        // connecting to server and receiving their greetings.
        for i in 1..5 {
            if socket
                .send(Message::Text(format!("Hi {i} times!").into()))
                .await
                .is_err()
            {
                println!("client {who} abruptly disconnected");
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }

        // By splitting socket we can send and receive at the same time. In this example we will send
        // unsolicited messages to client based on some sort of server's internal event (i.e .timer).
        let (mut sender, mut receiver) = socket.split();

        // Spawn a task that will push several messages to the client (does not matter what client does)
        let mut send_task = tokio::spawn(async move {
            let n_msg = 20;
            for i in 0..n_msg {
                // In case of any websocket error, we exit.
                if sender
                    .send(Message::Text(format!("Server message {i} ...").into()))
                    .await
                    .is_err()
                {
                    return i;
                }

                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            }

            println!("Sending close to {who}...");
            if let Err(e) = sender
                .send(Message::Close(Some(CloseFrame {
                    code: ringstream::ws::close_code::NORMAL,
                    reason: Utf8Bytes::from_static("Goodbye"),
                })))
                .await
            {
                println!("Could not send Close due to {e}, probably it is ok?");
            }
            n_msg
        });

        // This second task will receive messages from client and print them on server console
        let mut recv_task = tokio::spawn(async move {
            let mut cnt = 0;
            while let Some(Ok(msg)) = receiver.next().await {
                cnt += 1;
                // print message and break if instructed to do so
                if process_message(msg, who).is_break() {
                    break;
                }
            }
            cnt
        });

        // If any one of the tasks exit, abort the other.
        tokio::select! {
            rv_a = (&mut send_task) => {
                match rv_a {
                    Ok(a) => println!("{a} messages sent to {who}"),
                    Err(a) => println!("Error sending messages {a:?}")
                }
                recv_task.abort();
            },
            rv_b = (&mut recv_task) => {
                match rv_b {
                    Ok(b) => println!("Received {b} messages"),
                    Err(b) => println!("Error receiving messages {b:?}")
                }
                send_task.abort();
            }
        }

        // returning from the handler closes the websocket connection
        println!("Websocket context {who} destroyed");
    }

    /// helper to print contents of messages to stdout. Has special treatment for Close.
    fn process_message(msg: Message, who: SocketAddr) -> ControlFlow<(), ()> {
        match msg {
            Message::Text(t) => {
                println!(">>> {who} sent str: {t:?}");
            }
            Message::Binary(d) => {
                println!(">>> {who} sent {} bytes: {d:?}", d.len());
            }
            Message::Close(c) => {
                if let Some(cf) = c {
                    println!(
                        ">>> {who} sent close with code {} and reason `{}`",
                        cf.code, cf.reason
                    );
                } else {
                    println!(">>> {who} somehow sent close message without CloseFrame");
                }
                return ControlFlow::Break(());
            }

            Message::Pong(v) => {
                println!(">>> {who} sent pong with {v:?}");
            }
            // You should never need to manually handle Message::Ping, as axum's websocket library
            // will do so for you automagically by replying with Pong and copying the v according to
            // spec. But if you need the contents of the pings you can see them here.
            Message::Ping(v) => {
                println!(">>> {who} sent ping with {v:?}");
            }
        }
        ControlFlow::Continue(())
    }
}

/// axum 0.8's `examples/chat/src/main.rs`.
///
/// Differences from axum's file, line by line:
/// - the `use` lines: `extract::ws::{..}` moves out of the `axum::{..}`
///   import into `ringstream::ws::{..}`, `futures::{..}` is
///   `futures_util::{..}`, and the `tracing_subscriber` import is gone
///   with its `init` in `main`;
/// - `main` is `serve`: the same state and router, served with
///   `ringstream::server::serve(listener, app)` instead of
///   `axum::serve(listener, app)`, on the test's listener;
/// - `index` returns a short page instead of `include_str!("../chat.html")`
///   (the browser client is not part of this copy).
///
/// `websocket_handler`, `websocket` and `check_username` are otherwise
/// axum's, comments included.
mod chat {
    use axum::{
        extract::State,
        response::{Html, IntoResponse},
        routing::get,
        Router,
    };
    use futures_util::{sink::SinkExt, stream::StreamExt};
    use ringstream::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
    use std::{
        collections::HashSet,
        sync::{Arc, Mutex},
    };
    use tokio::sync::broadcast;

    // Our shared state
    struct AppState {
        // We require unique usernames. This tracks which usernames have been taken.
        user_set: Mutex<HashSet<String>>,
        // Channel used to send messages to all connected clients.
        tx: broadcast::Sender<String>,
    }

    pub async fn serve(listener: tokio::net::TcpListener) {
        // Set up application state for use with with_state().
        let user_set = Mutex::new(HashSet::new());
        let (tx, _rx) = broadcast::channel(100);

        let app_state = Arc::new(AppState { user_set, tx });

        let app = Router::new()
            .route("/", get(index))
            .route("/websocket", get(websocket_handler))
            .with_state(app_state);

        tracing::debug!("listening on {}", listener.local_addr().unwrap());
        ringstream::server::serve(listener, app).await.unwrap();
    }

    async fn websocket_handler(
        ws: WebSocketUpgrade,
        State(state): State<Arc<AppState>>,
    ) -> impl IntoResponse {
        ws.on_upgrade(|socket| websocket(socket, state))
    }

    // This function deals with a single websocket connection, i.e., a single
    // connected client / user, for which we will spawn two independent tasks (for
    // receiving / sending chat messages).
    async fn websocket(stream: WebSocket, state: Arc<AppState>) {
        // By splitting, we can send and receive at the same time.
        let (mut sender, mut receiver) = stream.split();

        // Username gets set in the receive loop, if it's valid.
        let mut username = String::new();
        // Loop until a text message is found.
        while let Some(Ok(message)) = receiver.next().await {
            if let Message::Text(name) = message {
                // If username that is sent by client is not taken, fill username string.
                check_username(&state, &mut username, name.as_str());

                // If not empty we want to quit the loop else we want to quit function.
                if !username.is_empty() {
                    break;
                } else {
                    // Only send our client that username is taken.
                    let _ = sender
                        .send(Message::Text(Utf8Bytes::from_static(
                            "Username already taken.",
                        )))
                        .await;

                    return;
                }
            }
        }

        // We subscribe *before* sending the "joined" message, so that we will also
        // display it to our client.
        let mut rx = state.tx.subscribe();

        // Now send the "joined" message to all subscribers.
        let msg = format!("{username} joined.");
        tracing::debug!("{msg}");
        let _ = state.tx.send(msg);

        // Spawn the first task that will receive broadcast messages and send text
        // messages over the websocket to our client.
        let mut send_task = tokio::spawn(async move {
            while let Ok(msg) = rx.recv().await {
                // In any websocket error, break loop.
                if sender.send(Message::text(msg)).await.is_err() {
                    break;
                }
            }
        });

        // Clone things we want to pass (move) to the receiving task.
        let tx = state.tx.clone();
        let name = username.clone();

        // Spawn a task that takes messages from the websocket, prepends the user
        // name, and sends them to all broadcast subscribers.
        let mut recv_task = tokio::spawn(async move {
            while let Some(Ok(Message::Text(text))) = receiver.next().await {
                // Add username before message.
                let _ = tx.send(format!("{name}: {text}"));
            }
        });

        // If any one of the tasks run to completion, we abort the other.
        tokio::select! {
            _ = &mut send_task => recv_task.abort(),
            _ = &mut recv_task => send_task.abort(),
        };

        // Send "user left" message (similar to "joined" above).
        let msg = format!("{username} left.");
        tracing::debug!("{msg}");
        let _ = state.tx.send(msg);

        // Remove username from map so new clients can take it again.
        state.user_set.lock().unwrap().remove(&username);
    }

    fn check_username(state: &AppState, string: &mut String, name: &str) {
        let mut user_set = state.user_set.lock().unwrap();

        if !user_set.contains(name) {
            user_set.insert(name.to_owned());

            string.push_str(name);
        }
    }

    // The chat page (axum's includes chat.html at compile time).
    async fn index() -> Html<&'static str> {
        Html("<!doctype html><title>chat</title>")
    }
}

type Client = WebSocketStream<TcpStream>;

/// Serves `app` on a loopback port.
async fn start<F, Fut>(app: F) -> std::net::SocketAddr
where
    F: FnOnce(TcpListener) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(app(listener));
    addr
}

async fn connect(addr: std::net::SocketAddr, path: &str) -> Client {
    let url = format!("ws://{addr}{path}");
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, response) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    assert_eq!(response.status(), 101);
    client
}

/// The next message, within 10 s.
async fn next(client: &mut Client) -> Option<TsMessage> {
    tokio::time::timeout(Duration::from_secs(10), client.next())
        .await
        .expect("a message within 10 s")
        .map(|message| message.expect("no error"))
}

/// The next text message, skipping Pings and Pongs.
async fn next_text(client: &mut Client) -> String {
    loop {
        match next(client).await {
            Some(TsMessage::Text(text)) => return text.as_str().to_owned(),
            Some(TsMessage::Ping(_) | TsMessage::Pong(_)) => {}
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

/// The echo example's whole conversation: its Ping, the greetings, the
/// twenty server messages sent from the split sink while the client
/// talks, and the server's `Close(1000, "Goodbye")`.
#[tokio::test]
async fn the_websockets_example_greets_streams_and_says_goodbye() {
    let addr = start(websockets::serve).await;
    let mut client = connect(addr, "/ws").await;

    // The example pings first; tungstenite answers with a Pong, which the
    // example's first `recv` takes.
    match next(&mut client).await {
        Some(TsMessage::Ping(payload)) => assert_eq!(&payload[..], [1, 2, 3]),
        other => panic!("expected the example's Ping, got {other:?}"),
    }
    client.flush().await.unwrap();

    for i in 1..5 {
        assert_eq!(next_text(&mut client).await, format!("Hi {i} times!"));
    }
    // The client talks while the server streams (the example prints it).
    client
        .send(TsMessage::text("Message number 1..."))
        .await
        .unwrap();
    client
        .send(TsMessage::binary(vec![0u8, 1, 2]))
        .await
        .unwrap();
    for i in 0..20 {
        assert_eq!(
            next_text(&mut client).await,
            format!("Server message {i} ...")
        );
    }
    let close = loop {
        match next(&mut client).await {
            Some(TsMessage::Close(frame)) => break frame,
            Some(TsMessage::Ping(_) | TsMessage::Pong(_)) => {}
            other => panic!("expected the example's Close, got {other:?}"),
        }
    };
    let close = close.expect("a Close with a code");
    assert_eq!(close.code, TsCloseCode::Normal);
    assert_eq!(close.reason.as_str(), "Goodbye");
}

/// A client of the echo example that closes first, with a code and a
/// reason, gets them echoed (the example's receive task sees the Close and
/// ends the conversation).
#[tokio::test]
async fn the_websockets_example_echoes_the_clients_close() {
    let addr = start(websockets::serve).await;
    let mut client = connect(addr, "/ws").await;
    assert!(matches!(next(&mut client).await, Some(TsMessage::Ping(_))));
    client.flush().await.unwrap();
    assert_eq!(next_text(&mut client).await, "Hi 1 times!");

    client
        .close(Some(TsCloseFrame {
            code: TsCloseCode::Library(4000),
            reason: "client done".into(),
        }))
        .await
        .unwrap();
    // Greetings already on their way may come first.
    let echoed = loop {
        match next(&mut client).await {
            Some(TsMessage::Close(frame)) => break frame,
            Some(TsMessage::Text(_) | TsMessage::Ping(_) | TsMessage::Pong(_)) => {}
            other => panic!("expected the Close echoed, got {other:?}"),
        }
    };
    let echoed = echoed.expect("the code echoed");
    assert_eq!(echoed.code, TsCloseCode::Library(4000));
    assert_eq!(echoed.reason.as_str(), "client done");
    assert!(
        next(&mut client).await.is_none(),
        "then the connection ends"
    );
}

/// The chat example: two users join and talk through the broadcast
/// channel, a taken name is refused, and a user who leaves is announced.
#[tokio::test]
async fn the_chat_example_joins_broadcasts_and_leaves() {
    let addr = start(chat::serve).await;

    let mut alice = connect(addr, "/websocket").await;
    alice.send(TsMessage::text("alice")).await.unwrap();
    // Received by alice herself: she subscribed before the announcement.
    assert_eq!(next_text(&mut alice).await, "alice joined.");

    let mut bob = connect(addr, "/websocket").await;
    bob.send(TsMessage::text("bob")).await.unwrap();
    assert_eq!(next_text(&mut bob).await, "bob joined.");
    assert_eq!(next_text(&mut alice).await, "bob joined.");

    alice.send(TsMessage::text("hello, bob")).await.unwrap();
    assert_eq!(next_text(&mut alice).await, "alice: hello, bob");
    assert_eq!(next_text(&mut bob).await, "alice: hello, bob");
    bob.send(TsMessage::text("hi alice 👋")).await.unwrap();
    assert_eq!(next_text(&mut alice).await, "bob: hi alice 👋");
    assert_eq!(next_text(&mut bob).await, "bob: hi alice 👋");

    // A name in use: told so, and the server ends the connection.
    let mut other = connect(addr, "/websocket").await;
    other.send(TsMessage::text("alice")).await.unwrap();
    assert_eq!(next_text(&mut other).await, "Username already taken.");
    loop {
        match tokio::time::timeout(Duration::from_secs(10), other.next())
            .await
            .expect("the server ends the connection")
        {
            None | Some(Err(_)) => break,
            Some(Ok(TsMessage::Close(_))) => {}
            Some(Ok(message)) => panic!("{message:?}"),
        }
    }

    // Bob leaves: alice is told.
    bob.close(None).await.unwrap();
    assert_eq!(next_text(&mut alice).await, "bob left.");
    // The name is free again.
    let mut bob_again = connect(addr, "/websocket").await;
    bob_again.send(TsMessage::text("bob")).await.unwrap();
    assert_eq!(next_text(&mut bob_again).await, "bob joined.");
    assert_eq!(next_text(&mut alice).await, "bob joined.");
}

/// The refusal of a request that is no WebSocket handshake, from the axum
/// extractor: a `426` with a `text/plain; charset=utf-8` body.
#[tokio::test]
async fn the_axum_extractor_refuses_with_a_text_body() {
    let addr = start(chat::serve).await;
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET /websocket HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let response = crate::common::read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 426);
    assert_eq!(
        response.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(response.header("upgrade"), Some("websocket"));
    assert!(!response.body.is_empty());

    // The chat's page is served on the same router.
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let page = crate::common::read_response(&mut socket, &mut buf, false).await;
    assert_eq!(page.status, 200);
}
