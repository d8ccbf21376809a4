//! The simulated solar installation behind `/api/livedata`, `/ws/live`
//! and the dashboard: 90 inverters whose values follow the sun.

use super::INVERTERS;

/// The sun's height over the simulated installation at `unix_secs`, as a
/// factor 0.05..1.
fn sun(unix_secs: u64) -> f64 {
    let day_secs = unix_secs % 86_400;
    let phase = (day_secs as f64 / 86_400.0) * std::f64::consts::TAU;
    (-(phase.cos())).max(0.05)
}

/// One simulated inverter at one moment.
struct Inverter {
    /// A variation of 0..0.1 between inverters and seconds.
    jitter: f64,
    /// AC power, W.
    power: f64,
    /// DC voltage of string 1, V.
    voltage: f64,
    /// DC current, A.
    current: f64,
    /// Yield today, kWh.
    daily: f64,
    /// Temperature, °C.
    temp: f64,
}

impl Inverter {
    /// Inverter `i` at `unix_secs`, under `sun`.
    fn at(i: usize, unix_secs: u64, sun: f64) -> Inverter {
        let jitter = (((unix_secs.wrapping_mul(31) + i as u64 * 977) % 1000) as f64) / 10_000.0;
        let rated = 600.0 + (i % 4) as f64 * 200.0;
        let power = rated * (sun * (0.9 + jitter)).min(1.0);
        let voltage = 30.0 + 8.0 * sun + jitter * 10.0;
        Inverter {
            jitter,
            power,
            voltage,
            current: power / voltage,
            daily: power * 6.5 / 1000.0,
            temp: 18.0 + 25.0 * sun + jitter * 40.0,
        }
    }
}

/// The totals of the simulated installation at one moment: what
/// `/api/livedata` ends with, without the inverters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveTotals {
    /// The moment, in unix seconds.
    pub timestamp: u64,
    /// AC power of the whole array, W.
    pub power: f64,
    /// Yield today of the whole array, kWh.
    pub yield_day: f64,
    /// Number of inverters.
    pub inverters: usize,
}

impl LiveTotals {
    /// The totals at `unix_secs`.
    pub fn at(unix_secs: u64) -> LiveTotals {
        let sun = sun(unix_secs);
        let (power, yield_day) = (0..INVERTERS)
            .map(|i| Inverter::at(i, unix_secs, sun))
            .fold((0.0, 0.0), |(power, daily), inv| {
                (power + inv.power, daily + inv.daily)
            });
        LiveTotals {
            timestamp: unix_secs,
            power,
            yield_day,
            inverters: INVERTERS,
        }
    }

    /// As a JSON object, with the precision of `/api/livedata`'s `total`.
    pub fn to_json(&self) -> String {
        format!(
            "{{\"timestamp\":{},\"power\":{:.1},\"yield_day\":{:.3},\"inverters\":{}}}",
            self.timestamp, self.power, self.yield_day, self.inverters
        )
    }
}

/// Print the simulated installation as JSON, line by line.
pub(super) fn write_livedata<W: std::fmt::Write>(out: &mut W, unix_secs: u64) -> std::fmt::Result {
    let sun = sun(unix_secs);
    writeln!(
        out,
        "{{\"site\":\"ringstream demo array\",\"timestamp\":{unix_secs},\"inverters\":["
    )?;
    let mut total_power = 0.0;
    let mut total_yield = 0.0;
    for i in 0..INVERTERS {
        let Inverter {
            jitter,
            power,
            voltage,
            current,
            daily,
            temp,
        } = Inverter::at(i, unix_secs, sun);
        total_power += power;
        total_yield += daily;
        let comma = if i + 1 == INVERTERS { "" } else { "," };
        writeln!(
            out,
            "{{\"serial\":\"1141{:08}\",\"name\":\"Inverter {:02} (roof {})\",",
            7_300_000 + i * 37,
            i + 1,
            i % 3 + 1
        )?;
        writeln!(
            out,
            "\"producing\":{},\"reachable\":true,\"limit_relative\":100.0,",
            power > 1.0
        )?;
        writeln!(out, "\"ac\":{{\"power\":{power:.1},\"voltage\":{:.1},\"current\":{:.3},\"frequency\":{:.2},\"power_factor\":{:.3}}},", 229.0 + jitter * 20.0, power / 230.0, 49.98 + jitter / 10.0, 0.99 + jitter / 100.0)?;
        writeln!(out, "\"dc\":[{{\"string\":1,\"power\":{:.1},\"voltage\":{voltage:.1},\"current\":{:.3},\"yield_day\":{:.1}}},", power / 2.0 + 4.0, current / 2.0, daily * 500.0)?;
        writeln!(out, "{{\"string\":2,\"power\":{:.1},\"voltage\":{:.1},\"current\":{:.3},\"yield_day\":{:.1}}}],", power / 2.0 + 3.0, voltage - 0.4, current / 2.0, daily * 500.0)?;
        writeln!(out, "\"yield_day\":{daily:.3},\"yield_total\":{:.3},\"temperature\":{temp:.1},\"efficiency\":{:.2}}}{comma}", 1500.0 + i as f64 * 12.5 + daily, 95.0 + jitter * 10.0)?;
    }
    writeln!(out, "],\"total\":{{\"power\":{total_power:.1},\"yield_day\":{total_yield:.3},\"inverters\":{INVERTERS}}}}}")
}
