//! Parsing of suffixed rates and times ("100Gbps", "1000ns", "0.001ms").
//!
//! Why exact decimal arithmetic rather than `f64`: "0.001ms" must become exactly 1_000_000 ps,
//! and a value with more precision than the simulator's unit (1 ps, 1 b/s) is reported as an
//! error instead of being silently rounded. Shared by the HPCC topology reader and the config
//! loader.

use crate::time::{Rate, Time, PS_PER_MS, PS_PER_NS, PS_PER_S, PS_PER_US};

/// Splits "12.5Gbps" into ("12.5", "Gbps"); whitespace between them is allowed.
fn split(s: &str) -> Result<(&str, &str), String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(format!("{s:?}: expected a non-negative value"));
    }
    let i = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    Ok((&s[..i], s[i..].trim()))
}

/// `num * scale` for a decimal `num`, exactly; errs on a malformed number, on a result with a
/// fractional part, or on overflow of `u64`.
fn scaled(num: &str, scale: u64, whole: &str, unit_name: &str) -> Result<u64, String> {
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(format!("{whole:?}: expected a non-negative decimal number before the unit"));
    }
    let frac = frac.trim_end_matches('0');
    let int = int.trim_start_matches('0');
    let too_big = || format!("{whole:?} is too large");
    if int.len() > 30 || frac.len() > 30 {
        return Err(if int.len() > 30 {
            too_big()
        } else {
            format!("{whole:?} has more precision than 1 {unit_name}")
        });
    }
    let parse =
        |x: &str| if x.is_empty() { Ok(0) } else { x.parse::<u128>().map_err(|_| too_big()) };
    let (iv, fv) = (parse(int)?, parse(frac)?);
    let den = 10u128.pow(frac.len() as u32);
    let scale = scale as u128;
    let fnum = fv.checked_mul(scale).ok_or_else(too_big)?;
    if fnum % den != 0 {
        return Err(format!("{whole:?} has more precision than 1 {unit_name}"));
    }
    let v = iv.checked_mul(scale).and_then(|x| x.checked_add(fnum / den)).ok_or_else(too_big)?;
    u64::try_from(v).map_err(|_| too_big())
}

/// Parses a rate such as "100Gbps", "2.5 Gbps", "40G", "1Mbps", "9600bps". Units (any case):
/// `Tbps`/`T`, `Gbps`/`G`, `Mbps`/`M`, `Kbps`/`K`, `bps`. A bare number is rejected as
/// ambiguous. Zero is accepted here; `Topology::validate` rejects zero-rate links.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (num, unit) = split(s)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "tbps" | "t" => 1_000_000_000_000,
        "gbps" | "g" => 1_000_000_000,
        "mbps" | "m" => 1_000_000,
        "kbps" | "k" => 1_000,
        "bps" => 1,
        "" => return Err(format!("rate {s:?}: expected a unit (Gbps, Mbps, Kbps or bps)")),
        _ => {
            return Err(format!(
                "rate {s:?}: unknown unit {unit:?}; expected Gbps, Mbps, Kbps or bps"
            ))
        }
    };
    scaled(num, scale, s, "bps").map(Rate)
}

/// Parses a time such as "1000ns", "1us", "0.001ms", "2s", "20ps". Units (case-sensitive):
/// `ps`, `ns`, `us` (or `µs`/`μs`), `ms`, `s`. A bare number is rejected as ambiguous.
pub fn parse_time(s: &str) -> Result<Time, String> {
    let (num, unit) = split(s)?;
    let scale = match unit {
        "ps" => 1,
        "ns" => PS_PER_NS,
        "us" | "µs" | "μs" => PS_PER_US,
        "ms" => PS_PER_MS,
        "s" => PS_PER_S,
        "" => return Err(format!("time {s:?}: expected a unit (ps, ns, us, ms or s)")),
        _ => {
            return Err(format!("time {s:?}: unknown unit {unit:?}; expected ps, ns, us, ms or s"))
        }
    };
    scaled(num, scale, s, "ps").map(Time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100Gbps"), Ok(Rate::gbps(100)));
        assert_eq!(parse_rate("400Gbps"), Ok(Rate::gbps(400)));
        assert_eq!(parse_rate("25gbps"), Ok(Rate::gbps(25)));
        assert_eq!(parse_rate("40G"), Ok(Rate::gbps(40)));
        assert_eq!(parse_rate(" 2.5 Gbps "), Ok(Rate(2_500_000_000)));
        assert_eq!(parse_rate("1Mbps"), Ok(Rate::mbps(1)));
        assert_eq!(parse_rate("10Kbps"), Ok(Rate(10_000)));
        assert_eq!(parse_rate("9600bps"), Ok(Rate(9600)));
        assert_eq!(parse_rate("1.6Tbps"), Ok(Rate::gbps(1600)));
        assert_eq!(parse_rate(".5G"), Ok(Rate::mbps(500)));
        for bad in
            ["100", "Gbps", "1.2.3Gbps", "-1Gbps", "1Gbit", "0.5bps", "99999999999999Tbps", ""]
        {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert!(parse_rate("100").unwrap_err().contains("expected a unit"));
        assert!(parse_rate("-1Gbps").unwrap_err().contains("non-negative"));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("1000ns"), Ok(Time::from_us(1)));
        assert_eq!(parse_time("1us"), Ok(Time::from_us(1)));
        assert_eq!(parse_time("1µs"), Ok(Time::from_us(1)));
        assert_eq!(parse_time("0.001ms"), Ok(Time::from_us(1)));
        assert_eq!(parse_time("0.000001s"), Ok(Time::from_us(1)));
        assert_eq!(parse_time("20ps"), Ok(Time(20)));
        assert_eq!(parse_time("1.5ns"), Ok(Time(1500)));
        assert_eq!(parse_time("2s"), Ok(Time(2 * PS_PER_S)));
        assert_eq!(parse_time("10.000us"), Ok(Time::from_us(10)));
        for bad in ["1", "1.5ps", "1 min", "1US", "x1ns", "1e3ns", "99999999999s"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        assert!(parse_time("1.5ps").unwrap_err().contains("precision"));
    }
}
