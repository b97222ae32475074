//! Empirical flow-size distributions (`workloads/*.txt`) and piecewise-linear sampling.
//!
//! Why piecewise-linear: the HPCC traffic generator (alibaba-edu/High-Precision-Congestion-Control,
//! `traffic_gen/traffic_gen.py`, `CustomRand.rand` / `getValueFromPercentile`) draws u uniform and
//! interpolates linearly between the two CDF points around it; BFC's `nsdifinal.cc` does the same.
//! Sampling the same way keeps our flow sizes, and so our loads, comparable with theirs.
//! `mean()` is HPCC's `CustomRand.getAvg`, which those generators use to turn a load into an
//! arrival rate. HomaSimulation/HomaModule sample listed sizes only (a step CDF); files taken
//! from them say so in their headers, and their step mean differs from `mean()`.
//!
//! File format (`workloads/README.md`): `#` comment lines, then `size_bytes cdf` lines with
//! cdf = P(size <= size_bytes) in [0, 1], both columns non-decreasing, the last cdf = 1.0.
//! A first cdf > 0 is a probability mass at the smallest size; a repeated size is a point mass
//! (a vertical step); a repeated cdf is a size range of zero probability.

use crate::rng::Rng;
use std::path::Path;

/// Tolerance on the last cdf value: files written with rounded decimals may end at 0.9999999999.
const LAST_CDF_TOLERANCE: f64 = 1e-9;

/// A flow-size distribution given by CDF points, sampled by linear interpolation.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// (size in bytes, P(size <= that)), sizes and cdf non-decreasing, last cdf exactly 1.0.
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses the `workloads/*.txt` format. Errors name the 1-based line and the rule broken.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut points = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 2 {
                return Err(format!(
                    "line {line_no}: expected 2 fields `size_bytes cdf`, found {}",
                    fields.len()
                ));
            }
            let size = parse_f64(fields[0], line_no, "size")?;
            let cdf = parse_f64(fields[1], line_no, "cdf")?;
            if size < 0.0 {
                return Err(format!("line {line_no}: size {size} is negative"));
            }
            if !(0.0..=1.0).contains(&cdf) {
                return Err(format!("line {line_no}: cdf {cdf} is outside [0, 1]"));
            }
            if let Some(&(prev_size, prev_cdf)) = points.last() {
                if size < prev_size {
                    return Err(format!(
                        "line {line_no}: size {size} is smaller than the previous size {prev_size} \
                         (sizes must be non-decreasing)"
                    ));
                }
                if cdf < prev_cdf {
                    return Err(format!(
                        "line {line_no}: cdf {cdf} is smaller than the previous cdf {prev_cdf} \
                         (cdf must be non-decreasing)"
                    ));
                }
            }
            points.push((size, cdf));
            last_line = line_no;
        }
        let Some(last) = points.last_mut() else {
            return Err("no data points: need at least one `size_bytes cdf` line".to_string());
        };
        if (last.1 - 1.0).abs() > LAST_CDF_TOLERANCE {
            return Err(format!("line {last_line}: last cdf is {}, must be 1.0", last.1));
        }
        last.1 = 1.0;
        Ok(Cdf { points })
    }

    /// Reads and parses a file; errors carry the path.
    pub fn load(path: &Path) -> Result<Cdf, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Cdf::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A distribution from points in code, checked by the same rules as `parse`.
    pub fn from_points(points: &[(f64, f64)]) -> Result<Cdf, String> {
        let text: String = points.iter().map(|(s, c)| format!("{s} {c}\n")).collect();
        Cdf::parse(&text)
    }

    /// Sizes uniform in [lo, hi] bytes (e.g. Pulser's 8-32 KB short flows, §IV).
    pub fn uniform(lo: u64, hi: u64) -> Result<Cdf, String> {
        Cdf::from_points(&[(lo as f64, 0.0), (hi as f64, 1.0)])
    }

    /// Every flow has the same size.
    pub fn constant(size: u64) -> Cdf {
        Cdf { points: vec![(size as f64, 1.0)] }
    }

    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The size at cumulative probability `u` in [0, 1): the first segment with u < F_i is
    /// interpolated linearly; u below the first cdf gives the smallest size (its point mass).
    /// Using `u < F_i` skips flat and vertical segments, so no division by zero can occur.
    pub fn quantile(&self, u: f64) -> f64 {
        let (x0, f0) = self.points[0];
        if u < f0 {
            return x0;
        }
        // First index whose cdf exceeds u; exists for u < 1 because the last cdf is 1.
        let i = self.points.partition_point(|&(_, f)| f <= u);
        if i >= self.points.len() {
            return self.points[self.points.len() - 1].0;
        }
        let (xa, fa) = self.points[i - 1];
        let (xb, fb) = self.points[i];
        xa + (xb - xa) * (u - fa) / (fb - fa)
    }

    /// One flow size in bytes: HPCC's `int(CustomRand.rand())` (truncation), at least 1 byte.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = self.quantile(rng.uniform());
        (x as u64).max(1)
    }

    /// Piecewise-linear mean: HPCC `getAvg`, sum (x_i + x_{i-1})/2 * (F_i - F_{i-1}), with a
    /// first cdf > 0 counted as a mass at the first size.
    pub fn mean(&self) -> f64 {
        let (x0, f0) = self.points[0];
        let mut s = x0 * f0;
        for w in self.points.windows(2) {
            let ((xa, fa), (xb, fb)) = (w[0], w[1]);
            s += (xa + xb) / 2.0 * (fb - fa);
        }
        s
    }

    /// P(size <= x) with the same linear interpolation (used to check files against their stats).
    pub fn cdf_at(&self, x: f64) -> f64 {
        let (x0, f0) = self.points[0];
        if x < x0 {
            return 0.0;
        }
        if x == x0 {
            // The last point with this size carries the whole vertical step.
            let j = self.points.partition_point(|&(s, _)| s <= x);
            return self.points[j - 1].1.max(f0);
        }
        let i = self.points.partition_point(|&(s, _)| s <= x);
        if i >= self.points.len() {
            return 1.0;
        }
        let (xa, fa) = self.points[i - 1];
        let (xb, fb) = self.points[i];
        fa + (fb - fa) * (x - xa) / (xb - xa)
    }

    pub fn min_size(&self) -> f64 {
        self.points[0].0
    }

    pub fn max_size(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }
}

fn parse_f64(s: &str, line_no: usize, what: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("line {line_no}: cannot parse {what} `{s}` as a finite number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Rng};

    fn workload(name: &str) -> Cdf {
        let path = format!("{}/../../workloads/{name}", env!("CARGO_MANIFEST_DIR"));
        Cdf::load(Path::new(&path)).unwrap()
    }

    fn sample_mean(c: &Cdf, n: usize, seed: u64) -> f64 {
        let mut r = Rng::stream(seed, stream::FLOW_SIZE, 0);
        (0..n).map(|_| c.sample(&mut r) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn means_match_the_readme_mean_pl_column() {
        // workloads/README.md, column "mean PL (B)".
        assert!((workload("WebSearch_HPCC.txt").mean() - 1_711_250.0).abs() < 1.0);
        assert!((workload("FbHdp_HPCC.txt").mean() - 120_421.0).abs() < 1.0);
        assert!((workload("BFC_W3_GoogleAllRPC.txt").mean() - 2_907.0).abs() < 1.0);
        // A file whose first cdf is > 0 (mass at the smallest size).
        assert!(
            (workload("Homa_W5_DCTCP_WebSearch_HomaSim_x1460.txt").mean() - 2_510_778.5).abs() < 1.0
        );
    }

    #[test]
    fn interpolated_cdf_matches_the_readme_columns() {
        let w = workload("WebSearch_HPCC.txt");
        assert!((w.cdf_at(10_000.0) - 0.150).abs() < 0.0005);
        assert!((w.cdf_at(100_000.0) - 0.542).abs() < 0.0005);
    }

    #[test]
    fn every_copied_workload_parses() {
        let dir = format!("{}/../../workloads", env!("CARGO_MANIFEST_DIR"));
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|s| s.to_str()) == Some("txt") {
                let c = Cdf::load(&p).unwrap();
                assert!(c.mean() > 0.0, "{}", p.display());
                n += 1;
            }
        }
        assert!(n >= 10, "found only {n} workload files in {dir}");
    }

    #[test]
    fn sample_mean_is_within_two_percent() {
        // The standard error of the sample mean is CV/sqrt(n): CV = 2.3 for WebSearch (0.5% at
        // 200k draws), 5.6 for FbHdp (1.2% at 200k, so 2M draws), 22 for Google W3 (too heavy
        // a tail for a 2% check at any affordable n; only its table mean is checked, above).
        for (name, n) in [("WebSearch_HPCC.txt", 200_000), ("FbHdp_HPCC.txt", 2_000_000)] {
            let c = workload(name);
            let m = sample_mean(&c, n, 11);
            assert!((m / c.mean() - 1.0).abs() < 0.02, "{name}: sample {m} vs {}", c.mean());
        }
    }

    #[test]
    fn first_mass_and_repeated_sizes_are_point_masses() {
        // 30% at exactly 100 B, 20% at exactly 500 B, the rest linear on (100, 500) and (500, 900).
        let c = Cdf::parse("100 0.3\n500 0.5\n500 0.7\n900 1.0\n").unwrap();
        assert_eq!(c.quantile(0.0), 100.0);
        assert_eq!(c.quantile(0.29), 100.0);
        assert!((c.quantile(0.4) - 300.0).abs() < 1e-9);
        assert_eq!(c.quantile(0.5), 500.0);
        assert_eq!(c.quantile(0.69), 500.0);
        assert!((c.quantile(0.85) - 700.0).abs() < 1e-9);
        let mut r = Rng::stream(3, stream::FLOW_SIZE, 0);
        let n = 100_000;
        let at_500 = (0..n).filter(|_| c.sample(&mut r) == 500).count() as f64 / n as f64;
        assert!((at_500 - 0.2).abs() < 0.01, "{at_500}");
        assert!((c.mean() - (0.3 * 100.0 + 0.2 * 300.0 + 0.2 * 500.0 + 0.3 * 700.0)).abs() < 1e-9);
    }

    #[test]
    fn flat_segments_get_no_mass_and_zero_size_becomes_one_byte() {
        let c = Cdf::parse("0 0\n10 0.5\n1000 0.5\n2000 1\n").unwrap();
        let mut r = Rng::stream(5, stream::FLOW_SIZE, 0);
        for _ in 0..10_000 {
            let s = c.sample(&mut r);
            assert!((1..=10).contains(&s) || (1000..=2000).contains(&s), "{s}");
        }
        assert_eq!(Cdf::constant(0).sample(&mut r), 1);
        assert_eq!(Cdf::constant(4096).sample(&mut r), 4096);
    }

    #[test]
    fn uniform_and_mixtures_build() {
        let u = Cdf::uniform(8_000, 32_000).unwrap();
        assert_eq!(u.mean(), 20_000.0);
        // Pulser §IV: short 8-32 KB uniform, long 1 MB carrying 80% of the bytes:
        // the long fraction p satisfies p*1e6 = 4 * (1-p) * 20e3.
        let p = 80_000.0 / 1_080_000.0;
        let mix = Cdf::from_points(&[(8e3, 0.0), (32e3, 1.0 - p), (1e6, 1.0 - p), (1e6, 1.0)]).unwrap();
        let long_bytes = p * 1e6;
        assert!((long_bytes / mix.mean() - 0.8).abs() < 1e-9);
    }

    #[test]
    fn parse_errors_name_line_and_rule() {
        let e = Cdf::parse("# c\n100 0\n50 0.5\n200 1\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("size"), "{e}");
        let e = Cdf::parse("100 0.6\n200 0.5\n300 1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("cdf"), "{e}");
        let e = Cdf::parse("100 0\n200 1.5\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("outside [0, 1]"), "{e}");
        let e = Cdf::parse("100 0\n200 0.9\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("must be 1.0"), "{e}");
        let e = Cdf::parse("# only comments\n\n").unwrap_err();
        assert!(e.contains("no data points"), "{e}");
        let e = Cdf::parse("100 0\nabc 1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("`abc`"), "{e}");
        let e = Cdf::parse("100 0 7\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("2 fields"), "{e}");
        let e = Cdf::parse("NaN 1\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        let e = Cdf::parse("-5 1\n").unwrap_err();
        assert!(e.contains("negative"), "{e}");
    }

    #[test]
    fn single_point_is_a_point_mass() {
        let c = Cdf::parse("1500 1.0\n").unwrap();
        assert_eq!(c.mean(), 1500.0);
        let mut r = Rng::stream(1, stream::FLOW_SIZE, 0);
        assert_eq!(c.sample(&mut r), 1500);
    }
}
