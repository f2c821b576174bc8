//! A small stock ledger: movements in, quantities and a movement journal out.

pub mod ledger;
pub mod movement;
pub mod report;

pub use ledger::{Ledger, LedgerError};
pub use movement::Movement;
