//! An in-memory loopback device for embassy-net: every frame the stack
//! transmits is queued and received again by the same stack, so client and
//! server sockets on one stack talk to each other, with no TUN device and
//! no root. smoltcp's `phy::Loopback`, adapted to `embassy_net_driver`.
//!
//! The link can lose and reorder frames: a deterministic pseudo-random
//! pattern (xorshift from a fixed seed), switched on and off by the test
//! through a [`Link`] handle, with counters to show it happened.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Context, Waker};

use embassy_net_driver::{Capabilities, Driver, HardwareAddress, LinkState, RxToken, TxToken};
use embassy_time::{Duration, Instant};

/// The link's MTU in bytes: 576, the IPv4 datagram every host must accept
/// (RFC 791). Its 536-byte segments put two in flight through a 1 KiB
/// transmit buffer, so that frames can overtake each other.
pub const MTU: usize = 576;

/// The longest a frame is held back for reordering, in simulated time.
pub const HOLD: Duration = Duration::from_millis(5);

/// What the link does to frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Drop about one frame in this many; 0 drops none.
    pub drop_one_in: u32,
    /// Hold about one frame in this many back until the next frame has
    /// passed it, or for [`HOLD`] at most (one frame at a time); 0
    /// reorders none.
    pub reorder_one_in: u32,
}

/// What the link has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames the stack transmitted.
    pub transmitted: u64,
    /// Frames dropped.
    pub dropped: u64,
    /// Frames delivered after a frame sent later.
    pub reordered: u64,
}

struct Wire {
    frames: VecDeque<Vec<u8>>,
    /// A frame held back to be delivered after the next one, and since
    /// when.
    held: Option<(Vec<u8>, Instant)>,
    /// The stack runner's waker, woken when a frame is queued.
    waker: Option<Waker>,
    faults: Faults,
    counters: Counters,
    rng: u64,
}

impl Wire {
    /// xorshift64: the same pattern on every run.
    fn one_in(&mut self, n: u32) -> bool {
        if n == 0 {
            return false;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % u64::from(n) == 0
    }

    fn push(&mut self, frame: Vec<u8>) {
        self.counters.transmitted += 1;
        let Faults {
            drop_one_in,
            reorder_one_in,
        } = self.faults;
        if self.one_in(drop_one_in) {
            self.counters.dropped += 1;
        } else if self.held.is_none() && self.one_in(reorder_one_in) {
            self.held = Some((frame, Instant::now()));
        } else {
            self.frames.push_back(frame);
            if let Some((held, _)) = self.held.take() {
                self.counters.reordered += 1;
                self.frames.push_back(held);
            }
        }
        if let Some(waker) = &self.waker {
            waker.wake_by_ref();
        }
    }

    fn register(&mut self, waker: &Waker) {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.waker = Some(waker.clone());
        }
    }
}

/// The test's handle on the link.
#[derive(Clone)]
pub struct Link(Rc<RefCell<Wire>>);

impl Link {
    /// Sets what the link does to the frames transmitted from now on.
    pub fn set_faults(&self, faults: Faults) {
        let mut wire = self.0.borrow_mut();
        wire.faults = faults;
        if faults.reorder_one_in == 0 {
            if let Some((held, _)) = wire.held.take() {
                wire.frames.push_back(held);
                if let Some(waker) = &wire.waker {
                    waker.wake_by_ref();
                }
            }
        }
    }

    /// What the link has done so far.
    pub fn counters(&self) -> Counters {
        self.0.borrow().counters
    }
}

/// The device given to `embassy_net::new`.
pub struct Loopback(Rc<RefCell<Wire>>);

/// A loopback device and the handle that controls its link.
pub fn loopback() -> (Loopback, Link) {
    let wire = Rc::new(RefCell::new(Wire {
        frames: VecDeque::new(),
        held: None,
        waker: None,
        faults: Faults::default(),
        counters: Counters::default(),
        rng: 0x2545_f491_4f6c_dd1d,
    }));
    (Loopback(Rc::clone(&wire)), Link(wire))
}

/// A received frame.
pub struct Rx(Vec<u8>);

impl RxToken for Rx {
    fn consume<R, F>(mut self, f: F) -> R
    where
        F: FnOnce(&mut [u8]) -> R,
    {
        f(&mut self.0)
    }
}

/// Room for one frame to transmit.
pub struct Tx<'a>(&'a RefCell<Wire>);

impl TxToken for Tx<'_> {
    fn consume<R, F>(self, len: usize, f: F) -> R
    where
        F: FnOnce(&mut [u8]) -> R,
    {
        let mut frame = vec![0; len];
        let r = f(&mut frame);
        self.0.borrow_mut().push(frame);
        r
    }
}

impl Driver for Loopback {
    type RxToken<'a>
        = Rx
    where
        Self: 'a;
    type TxToken<'a>
        = Tx<'a>
    where
        Self: 'a;

    fn receive(&mut self, cx: &mut Context) -> Option<(Rx, Tx<'_>)> {
        let mut wire = self.0.borrow_mut();
        wire.register(cx.waker());
        if wire.frames.is_empty() {
            // A frame held back goes out once it has waited HOLD with
            // nothing passing it: a delay rather than a reordering.
            match &wire.held {
                Some((_, since)) if since.elapsed() >= HOLD => {
                    let (held, _) = wire.held.take()?;
                    wire.frames.push_back(held);
                }
                // Look again on the next executor pass.
                Some(_) => cx.waker().wake_by_ref(),
                None => {}
            }
        }
        let frame = wire.frames.pop_front()?;
        drop(wire);
        Some((Rx(frame), Tx(&self.0)))
    }

    fn transmit(&mut self, cx: &mut Context) -> Option<Tx<'_>> {
        self.0.borrow_mut().register(cx.waker());
        Some(Tx(&self.0))
    }

    fn link_state(&mut self, _cx: &mut Context) -> LinkState {
        LinkState::Up
    }

    fn capabilities(&self) -> Capabilities {
        let mut caps = Capabilities::default();
        caps.max_transmission_unit = MTU;
        caps
    }

    fn hardware_address(&self) -> HardwareAddress {
        HardwareAddress::Ip
    }
}
