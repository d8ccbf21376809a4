//! A loopback network device for embassy-net, without a heap: every IP
//! packet the stack transmits is queued in a fixed ring and received again
//! by the same stack. It stands in for a NIC so that the firmware links and
//! runs on any Cortex-M4F (or QEMU) with no network hardware; nothing
//! leaves the chip. A board replaces it with its Ethernet or Wi-Fi driver
//! (any `embassy_net_driver::Driver`) and the stack's configuration that
//! goes with it (embassy-net's medium feature, the address or DHCP); the
//! server does not change.

use core::task::{Context, Waker};

use embassy_net_driver::{Capabilities, Driver, HardwareAddress, LinkState, RxToken, TxToken};

/// The link's MTU in bytes: 576, the IPv4 datagram every host must accept
/// (RFC 791).
pub const MTU: usize = 576;

/// Packets the ring holds; a packet transmitted while it is full waits
/// (`transmit` gives no token), as on a NIC whose transmit ring is full.
const FRAMES: usize = 4;

/// Packets queued between transmission and reception.
struct Ring {
    frames: [[u8; MTU]; FRAMES],
    lens: [usize; FRAMES],
    /// The oldest queued packet.
    head: usize,
    queued: usize,
    /// The stack runner's waker, woken when a packet is queued or taken.
    waker: Option<Waker>,
}

impl Ring {
    fn register(&mut self, waker: &Waker) {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.waker = Some(waker.clone());
        }
    }

    fn wake(&self) {
        if let Some(waker) = &self.waker {
            waker.wake_by_ref();
        }
    }
}

/// The device given to `embassy_net::new`.
pub struct Loopback {
    ring: Ring,
    /// The packet being received, copied out of the ring so that the ring
    /// can take a new packet meanwhile.
    rx: [u8; MTU],
}

impl Loopback {
    /// An empty loopback link.
    pub const fn new() -> Self {
        Loopback {
            ring: Ring {
                frames: [[0; MTU]; FRAMES],
                lens: [0; FRAMES],
                head: 0,
                queued: 0,
                waker: None,
            },
            rx: [0; MTU],
        }
    }
}

/// A received packet.
pub struct Rx<'a>(&'a mut [u8]);

impl RxToken for Rx<'_> {
    fn consume<R, F>(self, f: F) -> R
    where
        F: FnOnce(&mut [u8]) -> R,
    {
        f(self.0)
    }
}

/// Room for one packet in the ring.
pub struct Tx<'a>(&'a mut Ring);

impl TxToken for Tx<'_> {
    fn consume<R, F>(self, len: usize, f: F) -> R
    where
        F: FnOnce(&mut [u8]) -> R,
    {
        let ring = self.0;
        // `transmit` and `receive` hand out a token only with a free place.
        let at = (ring.head + ring.queued) % FRAMES;
        let len = len.min(MTU);
        let r = f(&mut ring.frames[at][..len]);
        ring.lens[at] = len;
        ring.queued += 1;
        ring.wake();
        r
    }
}

impl Driver for Loopback {
    type RxToken<'a>
        = Rx<'a>
    where
        Self: 'a;
    type TxToken<'a>
        = Tx<'a>
    where
        Self: 'a;

    fn receive(&mut self, cx: &mut Context) -> Option<(Rx<'_>, Tx<'_>)> {
        let ring = &mut self.ring;
        ring.register(cx.waker());
        if ring.queued == 0 {
            return None;
        }
        let len = ring.lens[ring.head];
        self.rx[..len].copy_from_slice(&ring.frames[ring.head][..len]);
        ring.head = (ring.head + 1) % FRAMES;
        ring.queued -= 1;
        // A place is free again: the stack may transmit.
        ring.wake();
        Some((Rx(&mut self.rx[..len]), Tx(ring)))
    }

    fn transmit(&mut self, cx: &mut Context) -> Option<Tx<'_>> {
        let ring = &mut self.ring;
        ring.register(cx.waker());
        (ring.queued < FRAMES).then_some(Tx(ring))
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
