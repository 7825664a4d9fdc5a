use super::*;

fn s(label: &str, values: &[f64]) -> Samples {
    Samples {
        label: label.into(),
        values: values.to_vec(),
    }
}

fn count(h: &str, needle: &str) -> usize {
    h.matches(needle).count()
}

#[test]
fn numbers_are_short() {
    assert_eq!(fmt_num(0.0), "0");
    assert_eq!(fmt_num(1_506_572.0), "1.51M");
    assert_eq!(fmt_num(2_000_000.0), "2M");
    assert_eq!(fmt_num(25_000.0), "25k");
    assert_eq!(fmt_num(250.4), "250");
    assert_eq!(fmt_num(1.5), "1.5");
    assert_eq!(fmt_num(0.25), "0.25");
    assert_eq!(fmt_num(-3.0), "-3");
}

#[test]
fn cdf_has_one_curve_per_set_and_the_labels() {
    let sets = [
        s("v6.6", &[1.0, 2.0, 4.0]),
        s("v6.12 NO_DELAY_DEQUEUE", &[0.0, 30.0]),
    ];
    let svg = latency_cdf("wakeup latency", "µs", &sets).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
    assert!(svg.contains("wakeup latency"));
    assert!(
        svg.contains("v6.12 NO_DELAY_DEQUEUE") && svg.contains(">v6.6<") || svg.contains("v6.6\n")
    );
    assert!(svg.contains("latency (µs)"));
    // two data curves, drawn in the first two palette colours
    assert_eq!(
        count(&svg, "stroke=\"#1F77B4\" stroke-width=\"2\""),
        1,
        "{svg}"
    );
    assert_eq!(
        count(&svg, "stroke=\"#FF7F0E\" stroke-width=\"2\""),
        1,
        "{svg}"
    );
    // same input, same bytes
    assert_eq!(svg, latency_cdf("wakeup latency", "µs", &sets).unwrap());
}

#[test]
fn bad_samples_are_errors_not_panics() {
    assert!(matches!(
        latency_cdf("t", "µs", &[]),
        Err(PlotError::Empty(_))
    ));
    let e = latency_cdf("t", "µs", &[s("a", &[])]).unwrap_err();
    assert!(e.to_string().contains("'a'"), "{e}");
    let e = latency_histogram("t", "µs", &[s("b", &[1.0, f64::NAN])]).unwrap_err();
    assert!(matches!(e, PlotError::Invalid(_)) && e.to_string().contains("'b'"));
    let e = latency_cdf("t", "µs", &[s("c", &[-1.0])]).unwrap_err();
    assert!(e.to_string().contains("negative"), "{e}");
    // zeros are drawn at the left edge, a decade below the smallest positive value: samples
    // 0 and 1 give decades 1..10 (the top is at least a decade above the bottom), then the
    // bottom moves to 0.1 for the zeros
    assert_eq!(check_samples("t", &[s("z", &[0.0, 1.0])]), Ok((0.1, 10.0)));
    assert_eq!(
        check_samples("t", &[s("z", &[2.0, 30.0])]),
        Ok((1.0, 100.0))
    );
    // all zero is drawable
    latency_cdf("t", "µs", &[s("z", &[0.0, 0.0])]).unwrap();
    latency_histogram("t", "µs", &[s("z", &[0.0])]).unwrap();
}

#[test]
fn histogram_bins() {
    // Samples 1, 1, 1, 10 µs: axis 1..10 (one decade, 10 log bins). 1 falls in bin 0; 10 is
    // the upper edge, kept in the last bin (9): two bars, both in the first colour.
    let svg = latency_histogram("h", "µs", &[s("only", &[1.0, 1.0, 1.0, 10.0])]).unwrap();
    assert_eq!(count(&svg, "fill=\"#1F77B4\""), 2, "{svg}");
    assert!(svg.contains(">only<") || svg.contains("only\n"));
    // one panel per set: the second set's bars are in the second colour
    let svg = latency_histogram("h", "µs", &[s("a", &[2.0]), s("b", &[3.0, 300.0])]).unwrap();
    assert_eq!(count(&svg, "fill=\"#1F77B4\""), 1);
    assert_eq!(count(&svg, "fill=\"#FF7F0E\""), 2);
}

#[test]
fn cyclictest_lines_break_at_empty_buckets() {
    // Buckets 1 and 2 joined by a line; bucket 4 alone is a dot.
    let t = [HistSeries {
        label: "thread 0".into(),
        counts: vec![0, 3, 4, 0, 5],
    }];
    let svg = cyclictest_histogram("cyclictest", &t).unwrap();
    assert_eq!(
        count(&svg, "stroke=\"#1F77B4\" stroke-width=\"2\""),
        1,
        "{svg}"
    );
    assert_eq!(count(&svg, "<circle"), 1, "{svg}");
    assert!(svg.contains("thread 0") && svg.contains("latency (µs)"));
    let zero = [HistSeries {
        label: "t".into(),
        counts: vec![0, 0],
    }];
    assert!(matches!(
        cyclictest_histogram("c", &zero),
        Err(PlotError::Empty(_))
    ));
    assert!(matches!(
        cyclictest_histogram("c", &[]),
        Err(PlotError::Empty(_))
    ));
}

fn span(cpu: u32, a: u64, b: u64, task: &str) -> RunSpan {
    RunSpan {
        cpu,
        start_ns: a,
        end_ns: b,
        task: task.into(),
    }
}

#[test]
fn timeline_rows_legend_and_other() {
    // 11 tasks: "big" ran longest, then t0..t9 (t9 shortest: 1 µs). The top 9 get colours,
    // the remaining 2 (t8, t9) are "other".
    let mut spans = vec![span(0, 0, 5_000_000, "big:1")];
    for i in 0..10u64 {
        spans.push(span(
            1,
            5_000_000 + i * 100_000,
            5_000_000 + i * 100_000 + 90_000 - i * 8_900,
            &format!("t{i}:{}", 10 + i),
        ));
    }
    let svg = cpu_timeline("who ran", 2, &spans).unwrap();
    assert!(svg.contains("CPU0") && svg.contains("CPU1"));
    assert!(svg.contains("big:1") && svg.contains("t7:17"));
    assert!(!svg.contains("t8:18") && svg.contains("other (2 tasks)"));
    assert_eq!(svg, cpu_timeline("who ran", 2, &spans).unwrap());
    let e = cpu_timeline("x", 2, &[span(0, 10, 5, "a")]).unwrap_err();
    assert!(e.to_string().contains("before it starts"), "{e}");
    let e = cpu_timeline("x", 2, &[span(2, 0, 5, "a")]).unwrap_err();
    assert!(e.to_string().contains("CPU 2"), "{e}");
    assert!(matches!(
        cpu_timeline("x", 2, &[]),
        Err(PlotError::Empty(_))
    ));
}

#[test]
fn curves_and_error_bars() {
    let c = |l: &str, pts: &[(f64, f64, f64)]| Curve {
        label: l.into(),
        points: pts
            .iter()
            .map(|&(x, mean, sd)| CurvePoint { x, mean, sd })
            .collect(),
    };
    let series = [
        c(
            "v6.6",
            &[(1.0, 10.0, 1.0), (4.0, 30.0, 2.0), (2.0, 20.0, 0.0)],
        ),
        c(
            "v6.18",
            &[(1.0, 12.0, 0.5), (2.0, 19.0, 0.5), (4.0, 25.0, 3.0)],
        ),
    ];
    let svg = curves("hackbench", "groups", "time (s)", &series).unwrap();
    assert!(svg.contains("v6.6") && svg.contains("v6.18") && svg.contains("groups"));
    assert!(svg.contains("time (s)"));
    // per curve: the line, and an error bar (with its dot at the mean) per point
    assert_eq!(
        count(&svg, "stroke=\"#1F77B4\" stroke-width=\"2\""),
        1,
        "{svg}"
    );
    assert_eq!(
        count(&svg, "stroke=\"#FF7F0E\" stroke-width=\"2\""),
        1,
        "{svg}"
    );
    assert_eq!(count(&svg, "<circle"), 6);
    assert_eq!(
        svg,
        curves("hackbench", "groups", "time (s)", &series).unwrap()
    );
    let e = curves("x", "x", "y", &[c("neg", &[(1.0, 1.0, -1.0)])]).unwrap_err();
    assert!(e.to_string().contains("'neg'"), "{e}");
    assert!(matches!(
        curves("x", "x", "y", &[c("e", &[])]),
        Err(PlotError::Empty(_))
    ));
}

#[test]
fn reproduction_bars() {
    let rows = [
        BarRow {
            label: "6.6.78".into(),
            published: Some(2_487_746.0),
            simulated: 2_400_000.0,
            sd: 10_000.0,
        },
        BarRow {
            label: "6.12.81 DELAY_DEQUEUE off".into(),
            published: None,
            simulated: 1_500_000.0,
            sd: 0.0,
        },
    ];
    let svg = published_vs_simulated("delay-dequeue: bogo_ops_per_sec", "ops/s", &rows).unwrap();
    assert!(svg.contains("6.12.81 DELAY_DEQUEUE off") && svg.contains("6.6.78"));
    // values written at the bars: 2.4M and 1.5M simulated, 2.49M published
    assert!(
        svg.contains("2.4M") && svg.contains("1.5M") && svg.contains("2.49M"),
        "{svg}"
    );
    assert!(svg.contains("published") && svg.contains("simulated (mean ± sd)"));
    assert_eq!(
        svg,
        published_vs_simulated("delay-dequeue: bogo_ops_per_sec", "ops/s", &rows).unwrap()
    );
    // no published value anywhere: no "published" legend entry
    let svg = published_vs_simulated("t", "u", &rows[1..]).unwrap();
    assert!(!svg.contains(">published<") && !svg.contains("published\n"));
    assert!(matches!(
        published_vs_simulated("t", "u", &[]),
        Err(PlotError::Empty(_))
    ));
    let bad = [BarRow {
        label: "n".into(),
        published: Some(f64::NAN),
        simulated: 1.0,
        sd: 0.0,
    }];
    assert!(matches!(
        published_vs_simulated("t", "u", &bad),
        Err(PlotError::Invalid(_))
    ));
}

#[test]
fn edge_cases_draw_or_refuse_without_panicking() {
    // single values, identical values, extreme magnitudes
    for v in [
        vec![5.0],
        vec![3.0, 3.0, 3.0],
        vec![1e-9, 1e12],
        vec![0.0, 1e15],
    ] {
        latency_cdf("t", "µs", &[s("x", &v)]).unwrap();
        latency_histogram("t", "µs", &[s("x", &v)]).unwrap();
    }
    let c = |pts: &[(f64, f64, f64)]| Curve {
        label: "c".into(),
        points: pts
            .iter()
            .map(|&(x, mean, sd)| CurvePoint { x, mean, sd })
            .collect(),
    };
    for pts in [
        vec![(1.0, 1.0, 0.0)],
        vec![(1.0, -5.0, 1.0), (2.0, -1.0, 0.0)],
        vec![(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)],
        vec![(1e9, 1e12, 1e11), (2e9, 3e12, 0.0)],
    ] {
        curves("t", "x", "y", &[c(&pts)]).unwrap();
    }
    assert!(curves("t", "x", "y", &[c(&[(f64::INFINITY, 1.0, 0.0)])]).is_err());
    // one empty run, many CPUs, a late start
    cpu_timeline("t", 256, &[span(255, 7, 7, "a:1")]).unwrap();
    cpu_timeline("t", 1, &[span(0, u64::MAX - 10, u64::MAX, "a:1")]).unwrap();
    let one = [HistSeries {
        label: "t".into(),
        counts: vec![u64::MAX / 4],
    }];
    cyclictest_histogram("t", &one).unwrap();
    let bars = |p: Option<f64>, v: f64, sd: f64| {
        [BarRow {
            label: "r".into(),
            published: p,
            simulated: v,
            sd,
        }]
    };
    published_vs_simulated("t", "u", &bars(None, 0.0, 0.0)).unwrap();
    published_vs_simulated("t", "u", &bars(Some(-3.0), -1.0, 0.5)).unwrap();
    published_vs_simulated("t", "u", &bars(Some(1e18), 1e-18, 0.0)).unwrap();
    assert!(published_vs_simulated("t", "u", &bars(None, 1.0, -1.0)).is_err());
}
