use stockroom::report::journal_sheet;
use stockroom::{Ledger, LedgerError, Movement};

fn receive(sku: &str, qty: u32) -> Movement {
    Movement::Receive { sku: sku.into(), qty }
}

#[test]
fn shipping_more_than_on_hand_is_refused() {
    let mut ledger = Ledger::new();
    ledger.apply(receive("BOLT-M6", 10)).unwrap();
    let err = ledger.apply(Movement::Ship { sku: "BOLT-M6".into(), qty: 11 }).unwrap_err();
    assert_eq!(err, LedgerError::Insufficient { sku: "BOLT-M6".into(), have: 10, want: 11 });
    assert_eq!(ledger.on_hand("BOLT-M6"), 10);
}

#[test]
fn journal_sheet_lists_every_movement() {
    let mut ledger = Ledger::new();
    ledger.apply(receive("NUT-M6", 40)).unwrap();
    ledger.apply(Movement::Ship { sku: "NUT-M6".into(), qty: 15 }).unwrap();
    ledger.apply(Movement::Adjust { sku: "NUT-M6".into(), delta: -2 }).unwrap();
    assert_eq!(ledger.on_hand("NUT-M6"), 23);
    assert_eq!(
        journal_sheet(ledger.journal()),
        "IN   NUT-M6   +40\nOUT  NUT-M6   -15\nADJ  NUT-M6   -2"
    );
}
