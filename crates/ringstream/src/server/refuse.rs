//! Refusing a connection: an answer sent, then the socket closed without
//! resetting it, bounded in time and bytes.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How long a refusal may take in all: the write of the answer, and reading
/// what the client still sends so that the close does not reset it.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// Most bytes of a refused client's request read and dropped.
const REFUSAL_DISCARD: usize = 16 * 1024;

/// Sends `answer` and closes, bounded in time and bytes.
pub(crate) async fn refuse<T: AsyncRead + AsyncWrite + Unpin>(mut socket: T, answer: &[u8]) {
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        socket.write_all(answer).await?;
        socket.shutdown().await?;
        let mut scratch = [0u8; 2048];
        let mut discarded = 0;
        while discarded < REFUSAL_DISCARD {
            match socket.read(&mut scratch).await? {
                0 => break,
                n => discarded += n,
            }
        }
        std::io::Result::Ok(())
    })
    .await;
}
