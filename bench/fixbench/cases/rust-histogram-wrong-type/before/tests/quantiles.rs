use latency_hist::Histogram;

#[test]
fn p50_and_p99_bounds() {
    let mut h = Histogram::new();
    for ms in [3, 4, 4, 8, 9, 12, 20, 40, 90, 700] {
        h.record(ms);
    }
    assert_eq!(h.total(), 10);
    assert_eq!(h.quantile_bound_ms(0.5), Some(10));
    assert_eq!(h.quantile_bound_ms(0.99), Some(1000));
}

#[test]
fn merging_adds_counts() {
    let mut a = Histogram::new();
    let mut b = Histogram::new();
    a.record(1);
    b.record(1);
    b.record(2000);
    a.merge(&b);
    assert_eq!(a.total(), 3);
    assert_eq!(a.quantile_bound_ms(1.0), None);
}
