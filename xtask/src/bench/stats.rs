//! One figure across rounds: the per-round values, their median and range.

use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub values: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// None when there are no values (a figure the condition does not have).
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[mid]
        } else {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        };
        Some(Spread {
            values: values.to_vec(),
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }

    pub fn to_json(&self) -> Value {
        json!({
            "values": self.values,
            "median": self.median,
            "min": self.min,
            "max": self.max,
        })
    }

    pub fn from_json(v: &Value) -> Option<Spread> {
        let values: Vec<f64> = v
            .get("values")?
            .as_array()?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        Some(Spread {
            values,
            median: v.get("median")?.as_f64()?,
            min: v.get("min")?.as_f64()?,
            max: v.get("max")?.as_f64()?,
        })
    }

    /// `1.40 [1.31–1.52]` with `decimals` digits; the range is left out
    /// when there is one round.
    pub fn show(&self, decimals: usize) -> String {
        self.show_as(decimals, "")
    }

    /// [`Spread::show`] with a unit after the median: `1.40× [1.31–1.52]`.
    pub fn show_as(&self, decimals: usize, unit: &str) -> String {
        if self.values.len() < 2 {
            return format!("{:.decimals$}{unit}", self.median);
        }
        format!(
            "{:.decimals$}{unit} [{:.decimals$}–{:.decimals$}]",
            self.median, self.min, self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let s = Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!(s.values, vec![4.0, 1.0, 2.0, 3.0], "round order is kept");
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn shows_median_and_range() {
        assert_eq!(
            Spread::of(&[1.3, 1.5, 1.4]).unwrap().show(2),
            "1.40 [1.30–1.50]"
        );
        assert_eq!(Spread::of(&[21.0]).unwrap().show(0), "21");
    }

    #[test]
    fn round_trips_through_json() {
        let s = Spread::of(&[1.0, 2.0, 5.0]).unwrap();
        assert_eq!(Spread::from_json(&s.to_json()), Some(s));
    }
}
