//! A stream's buffers as a whole: carried over to another transport
//! ([`Stream::map_io`]), resized ([`Stream::set_options`]) and given back
//! while the connection idles ([`Stream::release_idle_buffers`]).

use super::{pool, Stream, StreamOptions};

impl<T> Stream<T> {
    /// The same stream over `f(transport)`: buffered unread data, unsent
    /// writes and the stream's state carry over, nothing is copied. The
    /// server uses it to hand an upgraded connection over with the bytes
    /// the client sent after the request head.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Stream;
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (io, mut peer) = tokio::io::duplex(64);
    /// peer.write_all(b"one\ntwo\n").await.unwrap();
    /// let mut stream = Stream::new(io);
    /// assert_eq!(&stream.gets(64).await.unwrap().unwrap()[..], b"one\n");
    /// // `two\n` is buffered already; it stays readable through the box.
    /// let mut boxed = stream.map_io(Box::new);
    /// assert_eq!(&boxed.gets(64).await.unwrap().unwrap()[..], b"two\n");
    /// # });
    /// ```
    pub fn map_io<U>(self, f: impl FnOnce(T) -> U) -> Stream<U> {
        Stream {
            io: f(self.io),
            options: self.options,
            read_buf: self.read_buf,
            write_buf: self.write_buf,
            write_pos: self.write_pos,
            eof: self.eof,
            last_read_full: self.last_read_full,
            closed: self.closed,
            broken: self.broken,
            write_closed: self.write_closed,
            needs_flush: self.needs_flush,
        }
    }

    /// Changes the buffer sizes from the next read or write on (a protocol
    /// that takes a connection over may want smaller blocks than HTTP's).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::{Stream, StreamOptions};
    ///
    /// let (io, _peer) = tokio::io::duplex(64);
    /// let mut stream = Stream::new(io);
    /// stream.set_options(StreamOptions { minimum_read_size: 4096, ..StreamOptions::DEFAULT });
    /// assert_eq!(stream.options().minimum_read_size, 4096);
    /// ```
    pub fn set_options(&mut self, options: StreamOptions) {
        self.options = options.normalized();
    }

    /// Gives back the read block when nothing is left unread in it, and the
    /// write buffer when nothing is waiting to go out: a connection that
    /// goes idle holds neither. They go to a small pool kept by the thread
    /// (a few blocks of up to 64 KiB each), from which the next read or
    /// write of any stream on the thread takes one before allocating, so a
    /// connection that waits between messages costs no allocation per
    /// message. A read block still shared with `Bytes` handed out is not
    /// pooled: it lives on with them.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Stream;
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (io, mut peer) = tokio::io::duplex(64);
    /// peer.write_all(b"abc").await.unwrap();
    /// let mut stream = Stream::new(io);
    /// stream.fill().await.unwrap();
    /// stream.consume(3);
    /// stream.release_idle_buffers();
    /// assert!(stream.buffered().is_empty());
    /// # });
    /// ```
    pub fn release_idle_buffers(&mut self) {
        self.release_read_block();
        if self.pending_write_len() == 0 && self.write_buf.capacity() > 0 {
            pool::give_write(std::mem::take(&mut self.write_buf));
            self.write_pos = 0;
        }
    }

    /// Lets the read block go when nothing is left unread in it (at end of
    /// file, or idle); it is freed once handed-off chunks are dropped.
    pub(super) fn release_read_block(&mut self) {
        if self.read_buf.is_empty() && self.read_buf.capacity() > 0 {
            let block = std::mem::take(&mut self.read_buf);
            pool::give_read(block, self.options.minimum_read_size);
        }
    }
}

impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> Stream<T> {
    /// [`poll_fill`](Stream::poll_fill) for a connection that waits
    /// between messages: when the read must wait and nothing is buffered,
    /// the buffers are given back first
    /// ([`release_idle_buffers`](Self::release_idle_buffers)), so the
    /// connection holds no block while it waits.
    #[inline]
    pub(crate) fn poll_fill_releasing(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = self.poll_fill(cx);
        if polled.is_pending() && self.read_buf.is_empty() {
            self.release_idle_buffers();
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::task::Poll;

    use tokio::io::AsyncWriteExt;

    use super::Stream;

    #[tokio::test]
    async fn a_connection_waiting_for_its_next_message_holds_no_buffer() {
        let (io, mut peer) = tokio::io::duplex(1024);
        let mut stream = Stream::new(io);
        peer.write_all(b"request").await.unwrap();
        assert_eq!(stream.fill().await.unwrap(), 7);
        stream.consume(7);
        stream.buffer_write(b"response");
        assert!(stream.read_buf.capacity() > 0 && stream.write_buf.capacity() > 0);
        // Waiting with nothing buffered: the response goes out, and both
        // blocks are given back.
        let waited = poll_fn(|cx| Poll::Ready(stream.poll_fill_releasing(cx))).await;
        assert!(waited.is_pending());
        assert_eq!(stream.read_buf.capacity(), 0);
        assert_eq!(stream.write_buf.capacity(), 0);
        // The next message takes a block again.
        peer.write_all(b"next").await.unwrap();
        let read = poll_fn(|cx| stream.poll_fill_releasing(cx)).await.unwrap();
        assert_eq!(read, 4);
        assert_eq!(stream.buffered(), b"next");

        // Bytes still unread keep the block.
        let waited = poll_fn(|cx| Poll::Ready(stream.poll_fill_releasing(cx))).await;
        assert!(waited.is_pending());
        assert!(stream.read_buf.capacity() > 0);
    }
}
