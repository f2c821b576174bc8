use std::collections::BTreeMap;
use std::fmt;

use crate::movement::Movement;

#[derive(Debug, PartialEq, Eq)]
pub enum LedgerError {
    Insufficient { sku: String, have: i64, want: u32 },
    BelowZero { sku: String },
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LedgerError::Insufficient { sku, have, want } => write!(f, "{sku}: have {have}, cannot ship {want}"),
            LedgerError::BelowZero { sku } => write!(f, "{sku}: adjustment would go below zero"),
        }
    }
}

#[derive(Debug, Default)]
pub struct Ledger {
    stock: BTreeMap<String, i64>,
    journal: Vec<Movement>,
}

impl Ledger {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn on_hand(&self, sku: &str) -> i64 {
        self.stock.get(sku).copied().unwrap_or(0)
    }

    pub fn journal(&self) -> &[Movement] {
        &self.journal
    }

    pub fn apply(&mut self, movement: Movement) -> Result<(), LedgerError> {
        let have = self.on_hand(movement.sku());
        let next = match &movement {
            Movement::Receive { qty, .. } => have + i64::from(*qty),
            Movement::Ship { sku, qty } => {
                if have < i64::from(*qty) {
                    return Err(LedgerError::Insufficient { sku: sku.clone(), have, want: *qty });
                }
                have - i64::from(*qty)
            }
            Movement::Adjust { sku, delta } => {
                if have + delta < 0 {
                    return Err(LedgerError::BelowZero { sku: sku.clone() });
                }
                have + delta
            }
        };
        self.stock.insert(movement.sku().to_string(), next);
        self.journal.push(movement);
        Ok(())
    }
}
