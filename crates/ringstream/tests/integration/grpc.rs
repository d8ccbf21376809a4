//! gRPC on ringstream's server: a tonic service, written as tonic's code
//! generator writes one (routing by path to `tonic::server::Grpc`), served
//! over h2c and over TLS, called with tonic's own client — a unary call, a
//! server-streaming call, and a status error.
#![cfg(all(feature = "http2", feature = "tls"))]

use crate::common;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use http::uri::PathAndQuery;
use ringstream::server::tls::TlsConfig;
use ringstream::server::{service_fn, Server};
use ringstream::Incoming;
use tonic::server::{ServerStreamingService, UnaryService};
use tonic::transport::{Certificate, Channel, ClientTlsConfig};
use tonic::{Code, Request, Response, Status};
use tonic_prost::ProstCodec;

#[derive(Clone, PartialEq, prost::Message)]
struct HelloRequest {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HelloReply {
    #[prost(string, tag = "1")]
    message: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct CountRequest {
    #[prost(uint32, tag = "1")]
    to: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct CountReply {
    #[prost(uint32, tag = "1")]
    n: u32,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<Response<T>, Status>> + Send>>;

/// `SayHello`: a greeting, or `INVALID_ARGUMENT` for an empty name.
struct SayHello;

impl UnaryService<HelloRequest> for SayHello {
    type Response = HelloReply;
    type Future = BoxFuture<HelloReply>;

    fn call(&mut self, request: Request<HelloRequest>) -> Self::Future {
        Box::pin(async move {
            let name = request.into_inner().name;
            if name.is_empty() {
                return Err(Status::invalid_argument("a name, please"));
            }
            Ok(Response::new(HelloReply {
                message: format!("hello, {name}"),
            }))
        })
    }
}

type Counting = tokio_stream::Iter<std::vec::IntoIter<Result<CountReply, Status>>>;

/// `Count`: 1 to `to`, one message each.
struct Count;

impl ServerStreamingService<CountRequest> for Count {
    type Response = CountReply;
    type ResponseStream = Counting;
    type Future = BoxFuture<Counting>;

    fn call(&mut self, request: Request<CountRequest>) -> Self::Future {
        Box::pin(async move {
            let to = request.into_inner().to;
            let replies: Vec<_> = (1..=to).map(|n| Ok(CountReply { n })).collect();
            Ok(Response::new(tokio_stream::iter(replies)))
        })
    }
}

/// The service: each method's path to tonic's server side; another path
/// is `UNIMPLEMENTED`.
fn greeter() -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<tonic::body::Body>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(|request: http::Request<Incoming>| async move {
        let response = match request.uri().path() {
            "/test.Greeter/SayHello" => {
                let codec = ProstCodec::<HelloReply, HelloRequest>::default();
                tonic::server::Grpc::new(codec)
                    .unary(SayHello, request)
                    .await
            }
            "/test.Greeter/Count" => {
                let codec = ProstCodec::<CountReply, CountRequest>::default();
                tonic::server::Grpc::new(codec)
                    .server_streaming(Count, request)
                    .await
            }
            _ => Status::unimplemented("no such method").into_http(),
        };
        Ok::<_, Infallible>(response)
    })
}

async fn start(tls: Option<TlsConfig>) -> SocketAddr {
    let mut server = Server::bind("127.0.0.1:0").await.unwrap();
    if let Some(tls) = tls {
        server = server.tls(tls);
    }
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve(greeter()));
    addr
}

/// The three calls, through tonic's client on `channel`.
async fn calls(channel: Channel) {
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.unwrap();
    let reply = client
        .unary(
            Request::new(HelloRequest {
                name: "ringstream".into(),
            }),
            PathAndQuery::from_static("/test.Greeter/SayHello"),
            ProstCodec::<HelloRequest, HelloReply>::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.into_inner().message, "hello, ringstream");

    client.ready().await.unwrap();
    let refused = client
        .unary(
            Request::new(HelloRequest::default()),
            PathAndQuery::from_static("/test.Greeter/SayHello"),
            ProstCodec::<HelloRequest, HelloReply>::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert_eq!(refused.message(), "a name, please");

    client.ready().await.unwrap();
    let mut counted = client
        .server_streaming(
            Request::new(CountRequest { to: 5 }),
            PathAndQuery::from_static("/test.Greeter/Count"),
            ProstCodec::<CountRequest, CountReply>::default(),
        )
        .await
        .unwrap()
        .into_inner();
    let mut seen = Vec::new();
    while let Some(reply) = counted.message().await.unwrap() {
        seen.push(reply.n);
    }
    assert_eq!(seen, [1, 2, 3, 4, 5]);

    client.ready().await.unwrap();
    let missing = client
        .unary(
            Request::new(HelloRequest::default()),
            PathAndQuery::from_static("/test.Greeter/Missing"),
            ProstCodec::<HelloRequest, HelloReply>::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::Unimplemented);
}

#[tokio::test]
async fn a_tonic_service_answers_tonics_client_over_h2c() {
    let addr = start(None).await;
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    calls(channel).await;
}

#[tokio::test]
async fn a_tonic_service_answers_tonics_client_over_tls() {
    let ca = common::tls::Authority::new();
    let issued = ca.issue(&["localhost"]);
    let tls = TlsConfig::from_pem(issued.cert.as_bytes(), issued.key.as_bytes()).unwrap();
    let addr = start(Some(tls)).await;
    let client_tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca.pem()))
        .domain_name("localhost");
    let channel = Channel::from_shared(format!("https://localhost:{}", addr.port()))
        .unwrap()
        .tls_config(client_tls)
        .unwrap()
        .connect()
        .await
        .unwrap();
    calls(channel).await;
}
