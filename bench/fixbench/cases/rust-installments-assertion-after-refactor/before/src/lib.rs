//! Splits an order total into installments, the way the payment provider expects them.

pub mod money;
pub mod schedule;

pub use money::Cents;
pub use schedule::{schedule, Installment};
