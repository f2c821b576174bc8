use std::fmt;

/// An amount in euro cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cents(pub u64);

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02} EUR", self.0 / 100, self.0 % 100)
    }
}

/// Splits `total` into `parts` amounts that differ by at most one cent and add up to `total`.
/// The provider requires the first installment to carry the extra cents.
pub fn split(total: Cents, parts: u64) -> Vec<Cents> {
    assert!(parts > 0, "cannot split into zero parts");
    let base = total.0 / parts;
    let extra = total.0 % parts;
    (0..parts).map(|i| Cents(base + u64::from(i < extra))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_and_the_first_carry_the_rest() {
        let parts = split(Cents(10_000), 3);
        assert_eq!(parts, vec![Cents(3334), Cents(3333), Cents(3333)]);
        assert_eq!(parts.iter().map(|c| c.0).sum::<u64>(), 10_000);
    }

    #[test]
    fn displays_as_euros() {
        assert_eq!(Cents(123_405).to_string(), "1234.05 EUR");
    }
}
