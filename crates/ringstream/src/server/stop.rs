//! The server's stop signal as one connection sees it.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::sync::watch;

/// A waiter for the stop signal, kept for the connection's life.
type Waiter = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One connection's view of graceful shutdown.
///
/// The server sends `true` once on a `watch` channel when it begins to stop.
/// A connection asks two things of it: after each response, whether to keep
/// the connection alive ([`is_stopping`](Self::is_stopping), an atomic load
/// while nothing was sent), and, while idle between requests, to be woken
/// when the stop begins ([`poll_stopping`](Self::poll_stopping)). The
/// waiter for the latter is made on the first idle wait and then kept, so
/// that it joins the channel's waiter list once per connection rather than
/// once per request.
pub(crate) struct StopSignal {
    receiver: watch::Receiver<bool>,
    waiter: Option<Waiter>,
    stopped: bool,
}

impl StopSignal {
    pub(crate) fn new(receiver: watch::Receiver<bool>) -> Self {
        // A receiver subscribed after the send has already seen it.
        let stopped = *receiver.borrow();
        StopSignal {
            receiver,
            waiter: None,
            stopped,
        }
    }

    /// Whether the server has begun to stop.
    pub(crate) fn is_stopping(&self) -> bool {
        if self.stopped {
            return true;
        }
        match self.receiver.has_changed() {
            Ok(false) => false,
            // Something was sent, or the sender is gone: the value says.
            _ => *self.receiver.borrow(),
        }
    }

    /// Ready once the server has begun to stop. A dropped sender never
    /// stops the connection.
    pub(crate) fn poll_stopping(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.stopped {
            return Poll::Ready(());
        }
        let waiter = self.waiter.get_or_insert_with(|| {
            let mut receiver = self.receiver.clone();
            Box::pin(async move {
                if receiver.wait_for(|stop| *stop).await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
        });
        ready!(waiter.as_mut().poll(cx));
        self.stopped = true;
        self.waiter = None;
        Poll::Ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;

    #[tokio::test]
    async fn stop_is_seen_by_both_the_check_and_the_waiter() {
        let (stop, receiver) = watch::channel(false);
        let mut signal = StopSignal::new(receiver);
        assert!(!signal.is_stopping());
        let waiting = poll_fn(|cx| Poll::Ready(signal.poll_stopping(cx).is_ready())).await;
        assert!(!waiting, "nothing sent yet");
        // The waiter made above is kept and completes on the send.
        stop.send(true).unwrap();
        poll_fn(|cx| signal.poll_stopping(cx)).await;
        assert!(signal.is_stopping());
        // Ready again afterwards, without polling a finished future.
        poll_fn(|cx| signal.poll_stopping(cx)).await;
    }

    #[tokio::test]
    async fn a_dropped_sender_never_stops_the_connection() {
        let (stop, receiver) = watch::channel(false);
        let mut signal = StopSignal::new(receiver);
        drop(stop);
        assert!(!signal.is_stopping());
        let ready = poll_fn(|cx| Poll::Ready(signal.poll_stopping(cx).is_ready())).await;
        assert!(!ready);
    }

    #[tokio::test]
    async fn a_stop_sent_before_the_connection_started_counts() {
        let (stop, receiver) = watch::channel(false);
        stop.send(true).unwrap();
        assert!(StopSignal::new(receiver.clone()).is_stopping());
        assert!(StopSignal::new(stop.subscribe()).is_stopping());
    }
}
