//! `serve` takes what `axum::serve` takes: the `Router`,
//! `router.into_make_service()` and
//! `router.into_make_service_with_connect_info::<C>()`, with `C` each of
//! `SocketAddr`, `ConnectionInfo`, `Addr` and a type of the application's
//! own; checked over real sockets.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::Router;
use ringstream::server::{self, Addr, Config, ConnectionInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Sends `GET path` on a new connection and returns the client's own
/// address and the response body (the whole response, `Connection:
/// close`).
async fn fetch(addr: SocketAddr, path: &str) -> (SocketAddr, String) {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let me = socket.local_addr().unwrap();
    socket
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    tokio::time::timeout(Duration::from_secs(5), socket.read_to_string(&mut response))
        .await
        .expect("a response within 5 s")
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let body = response.split_once("\r\n\r\n").unwrap().1.to_owned();
    (me, body)
}

async fn socket_addr(ConnectInfo(addr): ConnectInfo<SocketAddr>) -> String {
    addr.to_string()
}

async fn connection_info(ConnectInfo(info): ConnectInfo<ConnectionInfo>) -> String {
    format!("{} -> {}", info.remote_addr(), info.local_addr())
}

async fn remote(ConnectInfo(addr): ConnectInfo<Addr>) -> String {
    addr.to_string()
}

/// A connect-info type of the application's own.
#[derive(Clone)]
struct Port(u16);

impl Connected<&ConnectionInfo> for Port {
    fn connect_info(info: &ConnectionInfo) -> Port {
        Port(info.remote_addr().socket_addr().map_or(0, |a| a.port()))
    }
}

async fn port(ConnectInfo(Port(port)): ConnectInfo<Port>) -> String {
    port.to_string()
}

async fn listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

#[tokio::test]
async fn into_make_service_with_connect_info_socket_addr() {
    let app = Router::new().route("/", get(socket_addr));
    let (listener, addr) = listener().await;
    tokio::spawn(server::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    ));
    for _ in 0..3 {
        let (me, body) = fetch(addr, "/").await;
        assert_eq!(body, me.to_string());
    }
}

/// The connect info comes from the make-service even when the server
/// gives requests no connection information of its own.
#[tokio::test]
async fn connect_info_does_not_need_the_servers_connection_info() {
    let app = Router::new()
        .route("/", get(socket_addr))
        .route("/info", get(connection_info))
        .route("/remote", get(remote))
        .route("/port", get(port));
    let config = Config {
        connection_info: false,
        ..Config::default()
    };
    let (a, addr_a) = listener().await;
    let (b, addr_b) = listener().await;
    let (c, addr_c) = listener().await;
    let (d, addr_d) = listener().await;
    tokio::spawn(
        server::serve(
            a,
            app.clone()
                .into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_config(config.clone()),
    );
    tokio::spawn(
        server::serve(
            b,
            app.clone()
                .into_make_service_with_connect_info::<ConnectionInfo>(),
        )
        .with_config(config.clone()),
    );
    tokio::spawn(
        server::serve(c, app.clone().into_make_service_with_connect_info::<Addr>())
            .with_config(config.clone()),
    );
    tokio::spawn(
        server::serve(d, app.into_make_service_with_connect_info::<Port>()).with_config(config),
    );

    let (me, body) = fetch(addr_a, "/").await;
    assert_eq!(body, me.to_string());
    let (me, body) = fetch(addr_b, "/info").await;
    assert_eq!(body, format!("{me} -> {addr_b}"));
    let (me, body) = fetch(addr_c, "/remote").await;
    assert_eq!(body, me.to_string());
    let (me, body) = fetch(addr_d, "/port").await;
    assert_eq!(body, me.port().to_string());
}

/// The plain `Router` and `into_make_service()` serve too; the plain
/// router's requests carry `ConnectInfo<SocketAddr>` from the server.
#[tokio::test]
async fn router_and_into_make_service_both_serve() {
    let app = Router::new().route("/", get(socket_addr));
    let (plain, addr_plain) = listener().await;
    let (made, addr_made) = listener().await;
    tokio::spawn(server::serve(plain, app.clone()));
    tokio::spawn(server::serve(made, app.into_make_service()));
    for addr in [addr_plain, addr_made] {
        let (me, body) = fetch(addr, "/").await;
        assert_eq!(body, me.to_string());
    }
}

/// `Server::serve` takes the same forms as `serve`.
#[tokio::test]
async fn server_serve_takes_connect_info_too() {
    let app = Router::new().route("/", get(socket_addr));
    let server = server::Server::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve(app.into_make_service_with_connect_info::<SocketAddr>()));
    let (me, body) = fetch(addr, "/").await;
    assert_eq!(body, me.to_string());
}
