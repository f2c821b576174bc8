/// One change to the stock of a SKU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Movement {
    /// Goods received from a supplier.
    Receive { sku: String, qty: u32 },
    /// Goods shipped to a customer.
    Ship { sku: String, qty: u32 },
    /// Stock-take correction; may be negative.
    Adjust { sku: String, delta: i64 },
}

impl Movement {
    pub fn sku(&self) -> &str {
        match self {
            Movement::Receive { sku, .. } | Movement::Ship { sku, .. } | Movement::Adjust { sku, .. } => sku,
        }
    }
}
