//! An [`App`] as a connection [`Handler`]: HTTP for the pool.

use embedded_io_async::{Read, Write};

use super::{serve_connection, App, Buffers, Error};
use crate::{Config, Handler};

/// Serves HTTP/1.1 with an [`App`] on every connection it is given: the
/// [`Handler`] that makes the `embassy-net` pool an HTTP server.
///
/// Each connection gets [`Buffers<RX, TX>`](Buffers) of its own, held in
/// the handler's future — so in the worker task that serves it, whose
/// size is fixed at build time: a connection slot's RAM is its task's
/// future. The handler itself holds only the app and the [`Config`], and
/// is shared by every worker.
///
/// `serve` ends with `Ok` when the connection ended by the rules (the pool
/// then closes it gracefully, with a lingering close) and with the I/O
/// error when the connection failed (the pool resets it).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{App, Error, HttpHandler, Request, Responder, Sent};
/// use ringstream_embedded::Config;
///
/// struct Hello;
///
/// impl App for Hello {
///     async fn handle<IO: Read + Write>(
///         &self,
///         _request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         responder.send(200, &[], b"hello").await
///     }
/// }
///
/// // 1 KiB to receive, 512 bytes to transmit, per connection.
/// static SERVER: HttpHandler<Hello, 1024, 512> = HttpHandler::new(Hello, Config::DEFAULT);
/// // In firmware: `pool.run_worker(&SERVER).await` in each worker task.
/// ```
#[derive(Debug)]
pub struct HttpHandler<A, const RX: usize = 1024, const TX: usize = 512> {
    app: A,
    config: Config,
}

impl<A: App, const RX: usize, const TX: usize> HttpHandler<A, RX, TX> {
    /// Serves `app` with `config`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, HttpHandler, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    ///
    /// struct NotFound;
    ///
    /// impl App for NotFound {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.send(404, &[], b"").await
    ///     }
    /// }
    ///
    /// // `const`: a `static` needs no initialisation at run time.
    /// static SERVER: HttpHandler<NotFound> = HttpHandler::new(NotFound, Config::DEFAULT);
    /// assert_eq!(SERVER.config(), &Config::DEFAULT);
    /// ```
    pub const fn new(app: A, config: Config) -> Self {
        HttpHandler { app, config }
    }

    /// The application.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, HttpHandler, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    ///
    /// struct Named(&'static str);
    ///
    /// impl App for Named {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.send(200, &[], self.0.as_bytes()).await
    ///     }
    /// }
    ///
    /// let server: HttpHandler<Named> = HttpHandler::new(Named("sensor-7"), Config::DEFAULT);
    /// assert_eq!(server.app().0, "sensor-7");
    /// ```
    pub const fn app(&self) -> &A {
        &self.app
    }

    /// The settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use embassy_time::Duration;
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, HttpHandler, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    ///
    /// struct Hello;
    ///
    /// impl App for Hello {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.send(200, &[], b"hello").await
    ///     }
    /// }
    ///
    /// let config = Config { io_timeout: Duration::from_secs(2), ..Config::DEFAULT };
    /// let server: HttpHandler<Hello> = HttpHandler::new(Hello, config);
    /// assert_eq!(server.config().io_timeout, Duration::from_secs(2));
    /// ```
    pub const fn config(&self) -> &Config {
        &self.config
    }
}

impl<A: App, const RX: usize, const TX: usize> Handler for HttpHandler<A, RX, TX> {
    async fn serve<IO: Read + Write>(&self, io: &mut IO) -> Result<(), IO::Error> {
        let mut buffers = Buffers::<RX, TX>::new();
        match serve_connection(io, &self.app, &mut buffers, &self.config).await {
            Err(Error::Io(e)) => Err(e),
            _ => Ok(()),
        }
    }
}
