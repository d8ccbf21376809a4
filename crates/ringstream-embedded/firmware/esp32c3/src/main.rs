//! ringstream-embedded's demo app as ESP32-C3 firmware: the same
//! `examples/demo/app.rs` and the same server (`../src/server.rs`: the
//! connection pool, its workers and the publisher) as the Cortex-M
//! firmware, on esp-rtos's embassy executor, over Wi-Fi (esp-radio) with
//! an address from DHCP.
//!
//! The network name and passphrase are read at build time from
//! `RINGSTREAM_WIFI_SSID` and `RINGSTREAM_WIFI_PASSWORD` (WPA2-Personal;
//! an empty passphrase joins an open network). The address the device
//! gets is printed on the USB serial-JTAG console; the dashboard is then
//! at `http://ADDRESS/`.
//!
//! Memory: esp-radio's Wi-Fi driver needs a heap (`esp_alloc`, 72 KiB
//! here); the HTTP server allocates nothing, as on every target.
#![no_std]
#![no_main]

#[path = "../../../examples/demo/app.rs"]
mod app;
#[path = "../../src/server.rs"]
mod server;

use embassy_executor::Spawner;
use embassy_net::{Runner, Stack, StackResources};
use embassy_time::{Duration, Timer};
use esp_hal::rng::Rng;
use esp_hal::timer::timg::TimerGroup;
use esp_println::println;
use esp_radio::wifi::sta::StationConfig;
use esp_radio::wifi::{AuthenticationMethodConfig, Config, Interface, WifiController};
use server::SOCKETS;
use static_cell::StaticCell;

esp_bootloader_esp_idf::esp_app_desc!();

/// The Wi-Fi network to join.
const SSID: &str = match option_env!("RINGSTREAM_WIFI_SSID") {
    Some(ssid) => ssid,
    None => "ringstream",
};
/// Its WPA2 passphrase; empty for an open network.
const PASSWORD: &str = match option_env!("RINGSTREAM_WIFI_PASSWORD") {
    Some(password) => password,
    None => "",
};

/// The stack's sockets: the server's, and DHCP's.
static RESOURCES: StaticCell<StackResources<{ SOCKETS + 1 }>> = StaticCell::new();

#[esp_rtos::main]
async fn main(spawner: Spawner) {
    let peripherals = esp_hal::init(esp_hal::Config::default());
    esp_alloc::heap_allocator!(size: 72 * 1024);
    let timg0 = TimerGroup::new(peripherals.TIMG0);
    esp_rtos::start(timg0.timer0, peripherals.FROM_CPU_INTR0);

    let mut controller =
        WifiController::new(peripherals.WIFI, Default::default()).expect("Wi-Fi starts");
    let authentication = if PASSWORD.is_empty() {
        AuthenticationMethodConfig::Open
    } else {
        AuthenticationMethodConfig::Wpa2Personal(PASSWORD.try_into().expect("a passphrase"))
    };
    let station = StationConfig::default()
        .with_ssid(SSID.try_into().expect("an SSID of at most 32 bytes"))
        .with_authentication(authentication);
    controller
        .set_config(&Config::Station(station))
        .expect("a station configuration");

    let seed = {
        let rng = Rng::new();
        u64::from(rng.random()) << 32 | u64::from(rng.random())
    };
    let config = embassy_net::Config::dhcpv4(Default::default());
    let resources = RESOURCES.init(StackResources::new());
    let (stack, runner) = embassy_net::new(Interface::station(), config, resources, seed);

    spawner.spawn(net(runner).expect("one net task"));
    spawner.spawn(wifi(controller).expect("one Wi-Fi task"));
    server::start(spawner, stack);
    report_address(stack).await;
}

/// The network stack.
#[embassy_executor::task]
async fn net(mut runner: Runner<'static, Interface>) -> ! {
    runner.run().await
}

/// Joins the network, and joins it again whenever the link drops.
#[embassy_executor::task]
async fn wifi(mut controller: WifiController<'static>) {
    loop {
        match controller.connect_async().await {
            Ok(_) => {
                println!("Wi-Fi: joined {SSID}");
                let _ = controller.wait_for_disconnect_async().await;
                println!("Wi-Fi: disconnected");
            }
            Err(e) => println!("Wi-Fi: could not join {SSID}: {e:?}"),
        }
        Timer::after(Duration::from_secs(5)).await;
    }
}

/// Prints the dashboard's address once DHCP has given one.
async fn report_address(stack: Stack<'static>) {
    stack.wait_config_up().await;
    if let Some(config) = stack.config_v4() {
        println!(
            "ringstream demo on http://{}/ ({} slots)",
            config.address.address(),
            server::SLOTS
        );
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    println!("{info}");
    loop {}
}
