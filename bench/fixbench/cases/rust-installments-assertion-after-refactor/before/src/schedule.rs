use crate::money::{split, Cents};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installment {
    pub number: u32,
    /// Days after the order date.
    pub due_in_days: u32,
    pub amount: Cents,
}

/// A schedule of `count` monthly installments (every 30 days, the first at checkout).
pub fn schedule(total: Cents, count: u32) -> Vec<Installment> {
    split(total, u64::from(count))
        .into_iter()
        .zip(0..)
        .map(|(amount, i)| Installment { number: i + 1, due_in_days: 30 * i, amount })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_monthly_installments() {
        let plan = schedule(Cents(19_999), 3);
        let summary: Vec<(u32, u32, u64)> = plan.iter().map(|i| (i.number, i.due_in_days, i.amount.0)).collect();
        assert_eq!(summary, vec![(1, 0, 6667), (2, 30, 6666), (3, 60, 6666)]);
    }
}
