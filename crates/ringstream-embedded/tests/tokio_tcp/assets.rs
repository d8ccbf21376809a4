//! Static assets from flash (`http::Asset`) over tokio sockets: `GET` and
//! `HEAD`, the entity-tag and `304` (RFC 9110 §13.1.2), the gzip variant
//! chosen by `Accept-Encoding` (§12.5.3), `405` for other methods, a
//! 40 KB asset through the 512-byte transmit buffer. Each test runs under
//! the counting allocator of `tokio_tcp.rs`: serving an asset allocates
//! nothing.

use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::{App, Asset, Error, Request, Responder, Sent, ETAG_LEN};
use tokio::io::AsyncWriteExt;

use super::http_app::{fnv1a, FNV_START};
use super::{
    connect, read_exact, read_to_close, request, serve_scripted_app, split_head, with_app,
};

/// `/index.html`: a page with a gzip variant (`gzip -9n` of it).
const INDEX: &[u8] = b"<!doctype html>\n<title>device</title>\n<h1>hello from flash</h1>\n";
const INDEX_GZ: &[u8] = &[
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xb3, 0x51, 0x4c, 0xc9, 0x4f, 0x2e,
    0xa9, 0x2c, 0x48, 0x55, 0xc8, 0x28, 0xc9, 0xcd, 0xb1, 0xe3, 0xb2, 0x29, 0xc9, 0x2c, 0xc9, 0x49,
    0xb5, 0x4b, 0x49, 0x2d, 0xcb, 0x4c, 0x4e, 0xb5, 0xd1, 0x87, 0xf0, 0xb8, 0x6c, 0x32, 0x0c, 0xed,
    0x32, 0x52, 0x73, 0x72, 0xf2, 0x15, 0xd2, 0x8a, 0xf2, 0x73, 0x15, 0xd2, 0x72, 0x12, 0x8b, 0x33,
    0x6c, 0xf4, 0x81, 0x82, 0x5c, 0x00, 0x72, 0x6b, 0x16, 0x79, 0x40, 0x00, 0x00, 0x00,
];

/// `/plain.txt`: no gzip variant.
const PLAIN: &[u8] = b"no variant here\n";

/// Length of `/big.bin` in bytes: 40 KB, eighty times the transmit buffer.
const BIG_LEN: usize = 40 * 1024;

/// `/big.bin`, in "flash".
static BIG: [u8; BIG_LEN] = {
    let mut bytes = [0u8; BIG_LEN];
    let mut i = 0;
    while i < BIG_LEN {
        bytes[i] = (i.wrapping_mul(131) ^ (i >> 9)) as u8;
        i += 1;
    }
    bytes
};

/// The table the test app looks paths up in; the tags are computed while
/// it is built, at compile time.
static ASSETS: [Asset; 3] = [
    Asset::new("/index.html", "text/html; charset=utf-8", INDEX).with_gzip(INDEX_GZ),
    Asset::new("/plain.txt", "text/plain", PLAIN),
    Asset::new("/big.bin", "application/octet-stream", &BIG),
];

/// An asset made and its tag read in `const` items: `Asset::new`,
/// `with_gzip` and the hash are evaluated by the compiler.
const CONST_INDEX: Asset = Asset::new("/index.html", "text/html", INDEX).with_gzip(INDEX_GZ);
const INDEX_TAG: &str = CONST_INDEX.etag();
const INDEX_GZ_TAG: Option<&str> = CONST_INDEX.gzip_etag();
const _: () = assert!(INDEX_TAG.len() == ETAG_LEN);

/// The tag a client expects for `bytes`: FNV-1a 64, computed here at run
/// time by the test's own hash, in quoted hex.
fn tag(bytes: &[u8]) -> String {
    format!("\"{:016x}\"", fnv1a(FNV_START, bytes))
}

/// Serves the assets of [`ASSETS`] with `Cache-Control: max-age=60`;
/// anything else is 404.
struct Assets;

impl App for Assets {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        match Asset::find(&ASSETS, request.path()) {
            Some(asset) => {
                let cache = [("cache-control", &b"max-age=60"[..])];
                asset.serve(request, responder, &cache).await
            }
            None => responder.send(404, &[], b"").await,
        }
    }
}

/// Sends `GET`-like `method path` with `fields` and `Connection: close`;
/// the response's head and body.
async fn exchange(port: u16, method: &str, path: &str, fields: &str) -> (String, Vec<u8>) {
    let wire =
        format!("{method} {path} HTTP/1.1\r\nHost: device\r\n{fields}Connection: close\r\n\r\n");
    let response = request(port, wire.as_bytes()).await;
    let (head, body) = split_head(&response);
    (head.to_owned(), body.to_vec())
}

/// The head of `/index.html`'s identity `200` (or `status`), as the wire
/// carries it.
fn index_head(status: &str, length: Option<usize>) -> String {
    let length = length.map_or(String::new(), |n| format!("content-length: {n}\r\n"));
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\netag: {}\r\n\
         vary: Accept-Encoding\r\ncache-control: max-age=60\r\n{length}connection: close\r\n\r\n",
        tag(INDEX)
    )
}

/// The head of `/index.html`'s gzip `200`.
fn index_gzip_head() -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\netag: {}\r\n\
         content-encoding: gzip\r\nvary: Accept-Encoding\r\ncache-control: max-age=60\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        tag(INDEX_GZ),
        INDEX_GZ.len()
    )
}

/// The entity-tags are FNV-1a 64 of the bytes, computed in `const`
/// items, and the gzip variant, a different representation, has its own
/// (RFC 9110 §8.8.3).
#[test]
fn entity_tags_are_computed_at_compile_time() {
    assert_eq!(INDEX_TAG, tag(INDEX));
    assert_eq!(INDEX_GZ_TAG, Some(tag(INDEX_GZ).as_str()));
    assert_eq!(ASSETS[0].etag(), INDEX_TAG);
    assert_eq!(ASSETS[1].gzip_etag(), None);
    assert_eq!(ASSETS[2].etag(), tag(&BIG));
    assert_eq!(
        Asset::find(&ASSETS, "/plain.txt").map(Asset::body),
        Some(PLAIN)
    );
    assert!(Asset::find(&ASSETS, "/plain").is_none());
    // `Debug` names the asset without printing its 40 KB.
    let debug = format!("{:?}", ASSETS[2]);
    assert!(debug.contains("len: 40960") && debug.len() < 200, "{debug}");
}

/// `GET` without `Accept-Encoding`: the identity bytes, exactly, with
/// their length, type, tag and the caller's `Cache-Control`; `Vary`, as
/// the asset has a variant.
#[tokio::test]
async fn get_serves_the_identity_bytes() {
    with_app(Assets, |port, _| async move {
        let (head, body) = exchange(port, "GET", "/index.html", "").await;
        assert_eq!(head, index_head("200 OK", Some(INDEX.len())));
        assert_eq!(body, INDEX);

        let (head, body) = exchange(port, "GET", "/missing", "").await;
        assert!(head.starts_with("HTTP/1.1 404 "), "{head}");
        assert!(body.is_empty());
    })
    .await;
}

/// RFC 9110 §9.3.2: `HEAD` gets the `GET`'s head, its length included,
/// and no body; on a kept-alive connection the next response follows at
/// once.
#[tokio::test]
async fn head_gets_the_length_and_no_body() {
    with_app(Assets, |port, _| async move {
        let mut stream = connect(port).await;
        stream
            .write_all(b"HEAD /index.html HTTP/1.1\r\nHost: device\r\n\r\n")
            .await
            .unwrap();
        let head = index_head("200 OK", Some(INDEX.len())).replace("connection: close\r\n", "");
        assert_eq!(
            String::from_utf8(read_exact(&mut stream, head.len()).await).unwrap(),
            head
        );
        stream
            .write_all(b"GET /plain.txt HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let rest = read_to_close(&mut stream).await;
        let (head, body) = split_head(&rest);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert_eq!(body, PLAIN);
    })
    .await;
}

/// RFC 9110 §13.1.2: `If-None-Match` naming the tag — alone, in a list,
/// weak (`W/`, weak comparison), or `*` — is `304` with the `ETag` and
/// `Vary`, and no body; the core advertises no length for it. A tag that
/// does not match, or a malformed list, gets the `200`.
#[tokio::test]
async fn if_none_match_gives_304() {
    with_app(Assets, |port, _| async move {
        let ours = tag(INDEX);
        let not_modified = index_head("304 Not Modified", None);
        for value in [
            ours.clone(),
            format!("\"other\", {ours}, \"more\""),
            format!("W/{ours}"),
            "*".to_owned(),
        ] {
            let fields = format!("If-None-Match: {value}\r\n");
            let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
            assert_eq!(head, not_modified, "{value}");
            assert!(body.is_empty(), "{value}");
            let (head, body) = exchange(port, "HEAD", "/index.html", &fields).await;
            assert_eq!(head, not_modified, "HEAD, {value}");
            assert!(body.is_empty());
        }
        for value in ["\"0000000000000000\"", &ours[..ours.len() - 1], "W/"] {
            let fields = format!("If-None-Match: {value}\r\n");
            let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
            assert_eq!(head, index_head("200 OK", Some(INDEX.len())), "{value}");
            assert_eq!(body, INDEX);
        }
    })
    .await;
}

/// RFC 9110 §12.5.3: `gzip`, `gzip;q=0.5, identity` and `*` accept the
/// gzip variant: its bytes, `Content-Encoding: gzip`, its own tag and
/// length. `gzip;q=0`, a header naming only another coding, or none: the
/// identity bytes. The tag compared by `If-None-Match` is the chosen
/// representation's.
#[tokio::test]
async fn accept_encoding_chooses_the_gzip_variant() {
    with_app(Assets, |port, _| async move {
        for accept in [
            "gzip",
            "gzip;q=0.5, identity",
            "*",
            "x-gzip, br",
            "GZIP;Q=1",
        ] {
            let fields = format!("Accept-Encoding: {accept}\r\n");
            let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
            assert_eq!(head, index_gzip_head(), "{accept}");
            assert_eq!(body, INDEX_GZ, "{accept}");
        }
        for accept in ["gzip;q=0", "br", "identity", "*;q=0", ""] {
            let fields = format!("Accept-Encoding: {accept}\r\n");
            let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
            assert_eq!(head, index_head("200 OK", Some(INDEX.len())), "{accept:?}");
            assert_eq!(body, INDEX, "{accept:?}");
        }

        // The gzip variant's tag matches the gzip variant only.
        let fields = format!(
            "Accept-Encoding: gzip\r\nIf-None-Match: {}\r\n",
            tag(INDEX_GZ)
        );
        let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
        let not_modified = index_gzip_head()
            .replace("200 OK", "304 Not Modified")
            .replace(&format!("content-length: {}\r\n", INDEX_GZ.len()), "");
        assert_eq!(head, not_modified);
        assert!(body.is_empty());
        let fields = format!("Accept-Encoding: gzip\r\nIf-None-Match: {}\r\n", tag(INDEX));
        let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
        assert_eq!(head, index_gzip_head());
        assert_eq!(body, INDEX_GZ);
    })
    .await;
}

/// An asset without a gzip variant ignores `Accept-Encoding` and says no
/// `Vary`.
#[tokio::test]
async fn an_asset_without_a_variant_ignores_accept_encoding() {
    with_app(Assets, |port, _| async move {
        let (head, body) = exchange(port, "GET", "/plain.txt", "Accept-Encoding: gzip\r\n").await;
        assert_eq!(
            head,
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\netag: {}\r\n\
                 cache-control: max-age=60\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                tag(PLAIN),
                PLAIN.len()
            )
        );
        assert_eq!(body, PLAIN);
    })
    .await;
}

/// Methods other than `GET` and `HEAD` get `405` with `Allow: GET, HEAD`,
/// as from `ringstream serve`'s static-file responder; `If-Match` naming
/// another tag gets `412` (RFC 9110 §13.1.1), one naming ours the asset.
#[tokio::test]
async fn other_methods_get_405_and_if_match_412() {
    with_app(Assets, |port, _| async move {
        for method in ["POST", "PUT", "DELETE"] {
            let (head, body) = exchange(port, method, "/index.html", "Content-Length: 0\r\n").await;
            assert_eq!(
                head,
                "HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\n\
                 allow: GET, HEAD\r\ncontent-length: 23\r\nconnection: close\r\n\r\n",
                "{method}"
            );
            assert_eq!(body, b"405 Method Not Allowed\n");
        }

        let (head, body) = exchange(port, "GET", "/index.html", "If-Match: \"other\"\r\n").await;
        assert_eq!(
            head,
            format!(
                "HTTP/1.1 412 Precondition Failed\r\netag: {}\r\nvary: Accept-Encoding\r\n\
                 content-type: text/plain; charset=utf-8\r\ncontent-length: 24\r\n\
                 connection: close\r\n\r\n",
                tag(INDEX)
            )
        );
        assert_eq!(body, b"412 Precondition Failed\n");
        let fields = format!("If-Match: {}\r\n", tag(INDEX));
        let (head, body) = exchange(port, "GET", "/index.html", &fields).await;
        assert_eq!(head, index_head("200 OK", Some(INDEX.len())));
        assert_eq!(body, INDEX);
    })
    .await;
}

/// A 40 KB asset through the 512-byte transmit buffer arrives intact,
/// twice on one connection.
#[tokio::test]
async fn a_40_kb_asset_arrives_intact() {
    with_app(Assets, |port, _| async move {
        let mut stream = connect(port).await;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\netag: {}\r\n\
             cache-control: max-age=60\r\ncontent-length: {BIG_LEN}\r\n\r\n",
            tag(&BIG)
        );
        for _ in 0..2 {
            stream
                .write_all(b"GET /big.bin HTTP/1.1\r\nHost: device\r\n\r\n")
                .await
                .unwrap();
            let response = read_exact(&mut stream, head.len() + BIG_LEN).await;
            let (got, body) = split_head(&response);
            assert_eq!(got, head);
            assert_eq!(body, BIG);
        }
    })
    .await;
}

/// The 40 KB asset is written from flash in one write of its own, never
/// copied through the 512-byte transmit buffer; the head goes before it.
#[test]
fn a_large_asset_is_written_from_where_it_lies() {
    let (output, served, writes) = serve_scripted_app(
        &Assets,
        b"GET /big.bin HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        [],
    );
    served.unwrap();
    let (head, body) = split_head(&output);
    assert_eq!(body, BIG);
    assert_eq!(writes, [head.len(), BIG_LEN]);
}

/// The RAM an asset server takes: the `serve_connection` future of an app
/// that serves only [`ASSETS`] (x86_64 debug, buffers apart), beside the
/// test app's.
#[tokio::test]
async fn asset_server_future_size() {
    let stream = super::connect_pair().await;
    let mut io = super::FromTokio::new(stream);
    let mut buffers = super::Buffers::<1024, 512>::new();
    let future = super::serve_connection(&mut io, &Assets, &mut buffers, &super::CONFIG);
    let size = std::mem::size_of_val(&future);
    println!("serve_connection future, asset app: {size} bytes");
    assert!(size <= 4 * 1024, "{size} bytes");
}
