//! PROXY headers over real sockets: versions 1 and 2 from a trusted
//! balancer give the handlers the client's address (over HTTP/1.1,
//! HTTP/2 and TLS), `LOCAL` keeps the socket's, and an untrusted source,
//! a missing, malformed or trickled-out header are closed without an
//! answer and counted.

use crate::common;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ringstream::server::{self, service_fn, Config, ConnectionInfo, Metrics, ProxyProtocol};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Answers with who the server thinks the client is:
/// `client=… balancer=… destination=… authority=…`.
fn app() -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(|req: http::Request<Incoming>| async move {
        let info = req.extensions().get::<ConnectionInfo>().unwrap();
        let text = format!(
            "client={} balancer={} destination={} authority={}",
            info.remote_addr(),
            info.proxied_by().map_or("-".to_string(), |a| a.to_string()),
            info.proxy_destination()
                .map_or("-".to_string(), |a| a.to_string()),
            info.proxy_tlvs()
                .authority()
                .map_or("-".to_string(), |a| String::from_utf8_lossy(a).into_owned()),
        );
        Ok::<_, Infallible>(http::Response::new(text))
    })
}

struct Running {
    addr: SocketAddr,
    metrics: Arc<Metrics>,
}

async fn start(config: Config) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = server::serve(listener, app()).with_config(config);
    let metrics = serve.metrics();
    tokio::spawn(serve);
    Running { addr, metrics }
}

fn trusting(cidr: &str) -> Config {
    Config {
        proxy_protocol: Some(ProxyProtocol::from([cidr.parse().unwrap()])),
        head_timeout: Duration::from_millis(500),
        ..Config::default()
    }
}

/// A version 2 header: PROXY over TCP/IPv4 from 203.0.113.7:51000 to
/// 192.0.2.1:443, with an authority extension.
fn v2_header(local: bool) -> Vec<u8> {
    let mut header = ringstream::ringstream_core::proxy::SIGNATURE.to_vec();
    let tlv = [0x02, 0, 11];
    let len = 12 + tlv.len() + 11;
    header.extend_from_slice(&[if local { 0x20 } else { 0x21 }, 0x11, 0, len as u8]);
    header.extend_from_slice(&[203, 0, 113, 7, 192, 0, 2, 1, 0xc7, 0x38, 0x01, 0xbb]);
    header.extend_from_slice(&tlv);
    header.extend_from_slice(b"example.com");
    header
}

/// Writes `bytes`, then one keep-alive GET; the response's body.
async fn ask(tcp: &mut TcpStream, before: &[u8]) -> String {
    tcp.write_all(before).await.unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let response = common::read_response(tcp, &mut buf, false).await;
    assert_eq!(response.status, 200);
    String::from_utf8(response.body).unwrap()
}

/// Whether the server closes `tcp` without a byte of answer.
async fn closed_unanswered(tcp: &mut TcpStream) -> bool {
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await;
    matches!(read, Ok(Ok(0)) | Ok(Err(_))) && answer.is_empty()
}

#[tokio::test]
async fn a_v1_header_gives_every_request_of_the_connection_the_clients_address() {
    let server = start(trusting("127.0.0.0/8")).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let me = tcp.local_addr().unwrap();
    let first = ask(&mut tcp, b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\n").await;
    assert_eq!(
        first,
        format!("client=203.0.113.7:51000 balancer={me} destination=192.0.2.1:443 authority=-")
    );
    // The header comes once; the next request on the connection is the same client's.
    assert_eq!(ask(&mut tcp, b"").await, first);
}

#[tokio::test]
async fn a_v2_header_trickled_byte_by_byte_brings_its_extensions() {
    let server = start(trusting("127.0.0.1/32")).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    for byte in v2_header(false) {
        tcp.write_all(&[byte]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let answer = ask(&mut tcp, b"").await;
    assert!(answer.starts_with("client=203.0.113.7:51000 "), "{answer}");
    assert!(
        answer.ends_with(" destination=192.0.2.1:443 authority=example.com"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_local_header_is_served_with_the_sockets_address() {
    let server = start(trusting("127.0.0.1/32")).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let me = tcp.local_addr().unwrap();
    let answer = ask(&mut tcp, &v2_header(true)).await;
    assert_eq!(
        answer,
        format!("client={me} balancer=- destination=- authority=-")
    );
}

#[tokio::test]
async fn an_untrusted_source_a_missing_or_broken_header_is_closed_unanswered() {
    // Only 10.0.0.0/8 may send a header: this test's 127.0.0.1 may not.
    let server = start(trusting("10.0.0.0/8")).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n",
    )
    .await
    .unwrap();
    assert!(closed_unanswered(&mut tcp).await);
    assert_eq!(server.metrics.proxy_refused(), 1);

    let server = start(trusting("127.0.0.0/8")).await;
    for first in [
        &b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"[..],
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\n",
        b"PROXY TCP9 203.0.113.7 192.0.2.1 51000 443\r\n",
        &[b'x'; 200],
    ] {
        let mut tcp = TcpStream::connect(server.addr).await.unwrap();
        tcp.write_all(first).await.unwrap();
        assert!(closed_unanswered(&mut tcp).await, "{first:?}");
    }
    // A v1 line that never ends within 107 bytes.
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let mut long = b"PROXY UNKNOWN ".to_vec();
    long.resize(150, b'a');
    tcp.write_all(&long).await.unwrap();
    assert!(closed_unanswered(&mut tcp).await);
    // Part of a header, then silence: closed at the head deadline.
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(&v2_header(false)[..20]).await.unwrap();
    let started = std::time::Instant::now();
    assert!(closed_unanswered(&mut tcp).await);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.metrics.proxy_refused(), 6);
    let mut prometheus = String::new();
    server.metrics.write_prometheus(&mut prometheus).unwrap();
    assert!(
        prometheus.contains("ringstream_proxy_refused_total 6"),
        "{prometheus}"
    );
}

#[tokio::test]
async fn without_proxy_protocol_a_header_is_a_bad_request() {
    let server = start(Config::default()).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n",
    )
    .await
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
}

#[cfg(feature = "http2")]
#[tokio::test]
async fn the_header_comes_before_the_http2_preface() {
    let server = start(trusting("127.0.0.0/8")).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(b"PROXY TCP6 2001:db8::7 2001:db8::1 4000 443\r\n")
        .await
        .unwrap();
    let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    client = client.ready().await.unwrap();
    let request = http::Request::get("http://localhost/").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let body = common::h2_body(response.await.unwrap().into_body()).await;
    let text = String::from_utf8(body).unwrap();
    assert!(text.starts_with("client=[2001:db8::7]:4000 "), "{text}");
}

#[cfg(feature = "tls")]
#[tokio::test]
async fn the_header_comes_before_the_tls_handshake() {
    use ringstream::server::tls::TlsConfig;
    use ringstream::server::Server;
    use rustls::pki_types::ServerName;

    let ca = common::tls::Authority::new();
    let issued = ca.issue(&["localhost"]);
    let tls = TlsConfig::from_pem(issued.cert.as_bytes(), issued.key.as_bytes()).unwrap();
    let server = Server::bind("127.0.0.1:0")
        .await
        .unwrap()
        .with_config(trusting("127.0.0.0/8"))
        .tls(tls);
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve(app()));

    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(&v2_header(false)).await.unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der()).unwrap();
    let mut config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tls.read_to_string(&mut answer).await.unwrap();
    assert!(
        answer.contains("\r\n\r\nclient=203.0.113.7:51000 "),
        "{answer}"
    );
    assert!(answer.ends_with("authority=example.com"), "{answer}");
}

/// Behind an HTTP proxy: `Forwarded` and `X-Forwarded-For` through the
/// trusted 127.0.0.0/8 name the client (the rightmost untrusted hop),
/// whatever the client wrote left of it; without the layer's trust they
/// are ignored.
#[tokio::test]
async fn forwarded_fields_name_the_client_only_through_trusted_proxies() {
    use ringstream::forwarded::ForwardedLayer;
    use tower_layer::Layer;

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let layered = ForwardedLayer::new(["127.0.0.0/8".parse().unwrap()]).layer(app());
    tokio::spawn(server::serve(listener, layered));
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let me = tcp.local_addr().unwrap();
    for (fields, client) in [
        (
            "Forwarded: for=6.6.6.6, for=\"[2001:db8::7]:4711\";proto=https\r\n",
            "[2001:db8::7]:4711",
        ),
        (
            "X-Forwarded-For: 6.6.6.6, 198.51.100.17, 127.0.0.9\r\n",
            "198.51.100.17:0",
        ),
        ("Forwarded: for=unknown\r\n", &me.to_string()),
    ] {
        let request = format!("GET / HTTP/1.1\r\nHost: t\r\n{fields}\r\n");
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        let response = common::read_response(&mut tcp, &mut buf, false).await;
        let text = String::from_utf8(response.body).unwrap();
        let expected_balancer = if client == me.to_string() {
            "-".to_string()
        } else {
            me.to_string()
        };
        assert_eq!(
            text,
            format!("client={client} balancer={expected_balancer} destination=- authority=-"),
            "{fields}"
        );
    }

    // Trusting nobody: the fields change nothing.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let layered = ForwardedLayer::new(["10.0.0.0/8".parse().unwrap()]).layer(app());
    tokio::spawn(server::serve(listener, layered));
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let me = tcp.local_addr().unwrap();
    let answer = ask(&mut tcp, b"").await;
    assert!(answer.starts_with(&format!("client={me} ")), "{answer}");
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nForwarded: for=1.2.3.4\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let response = common::read_response(&mut tcp, &mut buf, false).await;
    let text = String::from_utf8(response.body).unwrap();
    assert!(text.starts_with(&format!("client={me} ")), "{text}");
}
