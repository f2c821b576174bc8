use crate::movement::Movement;

/// The journal line printed on the daily stock sheet.
pub fn journal_line(movement: &Movement) -> String {
    match movement {
        Movement::Receive { sku, qty } => format!("IN   {sku:<8} +{qty}"),
        Movement::Ship { sku, qty } => format!("OUT  {sku:<8} -{qty}"),
        Movement::Adjust { sku, delta } => format!("ADJ  {sku:<8} {delta:+}"),
    }
}

pub fn journal_sheet(movements: &[Movement]) -> String {
    movements.iter().map(journal_line).collect::<Vec<_>>().join("\n")
}
