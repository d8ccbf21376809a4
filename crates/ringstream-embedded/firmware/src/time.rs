//! The embassy-time driver: the core's SysTick interrupting at 1 kHz.
//!
//! Every Cortex-M has a SysTick, so this driver needs nothing of the chip
//! but its core clock frequency ([`CORE_HZ`]). Each interrupt adds one
//! tick to a 64-bit count (it never wraps) and, when the earliest timer
//! is due, wakes the due timers from embassy's integrated timer queue.
//! The price of its simplicity: the core wakes 1,000 times a second even
//! when no timer is due, and time has a resolution of 1 ms. A chip's own
//! low-power timer with a compare match does better on a battery.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::Driver;
use embassy_time_queue_utils::Queue;

/// The core clock in Hz: 16 MHz, the internal oscillator an STM32F4
/// runs on out of reset. A board that sets up a PLL states its own
/// frequency here. (QEMU's `netduinoplus2` clocks its core at 168 MHz, so
/// there the firmware's time runs about ten times fast.)
pub const CORE_HZ: u32 = 16_000_000;

/// Ticks per second, as embassy-time's `tick-hz-1_000` feature says.
const TICK_HZ: u32 = 1_000;

struct SysTickDriver {
    /// Ticks since [`init`].
    ticks: Mutex<Cell<u64>>,
    /// The tick at which the earliest timer is due (`u64::MAX`: none).
    alarm: Mutex<Cell<u64>>,
    queue: Mutex<RefCell<Queue>>,
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    ticks: Mutex::new(Cell::new(0)),
    alarm: Mutex::new(Cell::new(u64::MAX)),
    queue: Mutex::new(RefCell::new(Queue::new())),
});

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.ticks.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut queue = self.queue.borrow_ref_mut(cs);
            if queue.schedule_wake(at, waker) {
                // Wakes at once what is already due, and returns the next.
                let now = self.ticks.borrow(cs).get();
                self.alarm.borrow(cs).set(queue.next_expiration(now));
            }
        });
    }
}

/// Starts the SysTick: an interrupt every millisecond from now on.
pub fn init(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(CORE_HZ / TICK_HZ - 1);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

#[exception]
fn SysTick() {
    critical_section::with(|cs| {
        let ticks = DRIVER.ticks.borrow(cs);
        let now = ticks.get() + 1;
        ticks.set(now);
        let alarm = DRIVER.alarm.borrow(cs);
        if now >= alarm.get() {
            alarm.set(DRIVER.queue.borrow_ref_mut(cs).next_expiration(now));
        }
    });
}
