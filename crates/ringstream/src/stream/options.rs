//! Buffer sizes of a [`Stream`](super::Stream).

/// Buffer sizes of a [`Stream`](super::Stream), all in bytes.
///
/// # Examples
///
/// ```
/// use ringstream::StreamOptions;
///
/// let options = StreamOptions {
///     minimum_write_size: 4 * 1024,
///     ..StreamOptions::DEFAULT
/// };
/// assert_eq!(options.minimum_read_size, StreamOptions::DEFAULT_MINIMUM_READ_SIZE);
/// assert_eq!(StreamOptions::default(), StreamOptions::DEFAULT);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamOptions {
    /// Size of the block, in bytes, asked of the operating system by one
    /// read when the read buffer has to grow. Values below 1 are treated
    /// as 1.
    pub minimum_read_size: usize,
    /// Upper bound, in bytes, of a single read from the operating system.
    /// Values below `minimum_read_size` are treated as `minimum_read_size`.
    pub maximum_read_size: usize,
    /// Flush threshold, in bytes: writes are buffered until this many bytes
    /// are pending, and payloads at least this large are written without
    /// being copied into the write buffer.
    pub minimum_write_size: usize,
    /// Upper bound, in bytes, of the read buffer while
    /// [`peek`](super::Stream::peek), [`read_until_exclusive`](super::Stream::read_until_exclusive)
    /// or [`gets`](super::Stream::gets) waits for more data; exceeding it is
    /// an error instead of unbounded growth.
    pub maximum_buffer_size: usize,
}

impl StreamOptions {
    /// Default [`minimum_read_size`](Self::minimum_read_size): 64 KiB.
    ///
    /// Chosen with the `stream-throughput` benchmark: 256 MiB over TCP
    /// loopback, `Stream::read_partial` against tokio's `BufReader` and
    /// plain reads with the same block, medians of 21 alternated rounds on
    /// a shared 2-core machine (`ringstream-bench stream-throughput --size
    /// 256MiB --rounds 21 --block-size 16KiB --block-size 64KiB
    /// --block-size 128KiB --block-size 256KiB`):
    ///
    /// | block   | read_partial GB/s | BufReader GB/s | raw read GB/s | read_partial CPU GB/s |
    /// |---------|------|------|------|------|
    /// | 16 KiB  | 1.10 | 1.07 | 1.12 | 1.61 |
    /// | 64 KiB  | 1.32 | 1.29 | 1.25 | 1.89 |
    /// | 128 KiB | 1.29 | 1.29 | 1.23 | 1.95 |
    /// | 256 KiB | 1.37 | 1.46 | 1.38 | 2.00 |
    ///
    /// 64 KiB takes most of the gain over 16 KiB (+20%); larger blocks add
    /// at most a few percent, within the run-to-run noise, for two to four
    /// times the memory held per idle connection.
    pub const DEFAULT_MINIMUM_READ_SIZE: usize = 64 * 1024;

    /// Default [`maximum_read_size`](Self::maximum_read_size): 16 MiB.
    pub const DEFAULT_MAXIMUM_READ_SIZE: usize = 16 * 1024 * 1024;

    /// Default [`minimum_write_size`](Self::minimum_write_size): 64 KiB.
    pub const DEFAULT_MINIMUM_WRITE_SIZE: usize = 64 * 1024;

    /// Default [`maximum_buffer_size`](Self::maximum_buffer_size): 1 MiB.
    pub const DEFAULT_MAXIMUM_BUFFER_SIZE: usize = 1024 * 1024;

    /// The default options.
    pub const DEFAULT: StreamOptions = StreamOptions {
        minimum_read_size: Self::DEFAULT_MINIMUM_READ_SIZE,
        maximum_read_size: Self::DEFAULT_MAXIMUM_READ_SIZE,
        minimum_write_size: Self::DEFAULT_MINIMUM_WRITE_SIZE,
        maximum_buffer_size: Self::DEFAULT_MAXIMUM_BUFFER_SIZE,
    };

    /// The options with out-of-range values brought into range (see each
    /// field).
    pub(crate) fn normalized(mut self) -> Self {
        self.minimum_read_size = self.minimum_read_size.max(1);
        self.maximum_read_size = self.maximum_read_size.max(self.minimum_read_size);
        self
    }
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}
