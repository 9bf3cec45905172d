use super::*;

const URL: &str = "http://lms.example/theme/all.css";
const S: fn(u64) -> Duration = Duration::from_secs;

fn headers(pairs: &[(&'static str, &'static str)]) -> Headers<'static> {
    Headers::from_pairs(pairs.iter().copied())
}

#[test]
fn max_age_is_fresh_until_it_runs_out_then_revalidated() {
    let mut cache = Cache::new();
    assert_eq!(cache.lookup(URL, S(0)), Lookup::Fetch);
    let h = headers(&[
        ("Cache-Control", "public, max-age=60"),
        ("ETag", "\"v1\""),
        ("Last-Modified", "Tue, 01 Sep 2026 10:00:00 GMT"),
    ]);
    cache.store(URL, 200, &h, S(10));
    assert_eq!(cache.lookup(URL, S(69)), Lookup::Fresh);
    assert_eq!(
        cache.lookup(URL, S(70)),
        Lookup::Revalidate {
            if_none_match: Some("\"v1\""),
            if_modified_since: Some("Tue, 01 Sep 2026 10:00:00 GMT"),
        }
    );
    // A 304 with a new max-age makes it fresh again from then on.
    cache.store(
        URL,
        304,
        &headers(&[("cache-control", "max-age=30")]),
        S(80),
    );
    assert_eq!(cache.lookup(URL, S(109)), Lookup::Fresh);
    assert!(matches!(
        cache.lookup(URL, S(110)),
        Lookup::Revalidate { .. }
    ));
}

#[test]
fn age_shortens_and_s_maxage_is_ignored() {
    let mut cache = Cache::new();
    let h = headers(&[
        ("Cache-Control", "s-maxage=3600, max-age=100"),
        ("Age", "40"),
        ("ETag", "x"),
    ]);
    cache.store(URL, 200, &h, S(0));
    assert_eq!(cache.lookup(URL, S(59)), Lookup::Fresh);
    assert!(matches!(
        cache.lookup(URL, S(60)),
        Lookup::Revalidate { .. }
    ));
}

#[test]
fn no_store_keeps_nothing_and_drops_what_was_kept() {
    let mut cache = Cache::new();
    cache.store(
        URL,
        200,
        &headers(&[("Cache-Control", "max-age=600")]),
        S(0),
    );
    assert_eq!(cache.lookup(URL, S(1)), Lookup::Fresh);
    cache.store(
        URL,
        200,
        &headers(&[("Cache-Control", "no-store, max-age=600"), ("ETag", "x")]),
        S(2),
    );
    assert_eq!(cache.lookup(URL, S(3)), Lookup::Fetch);
    assert!(cache.is_empty());
    cache.store(
        URL,
        200,
        &headers(&[("Vary", "Accept, *"), ("ETag", "x")]),
        S(4),
    );
    assert!(cache.is_empty());
}

#[test]
fn no_cache_and_pragma_always_revalidate() {
    let mut cache = Cache::new();
    cache.store(
        URL,
        200,
        &headers(&[
            ("Cache-Control", "no-cache, max-age=600"),
            ("ETag", "\"a\""),
        ]),
        S(0),
    );
    assert_eq!(
        cache.lookup(URL, S(0)),
        Lookup::Revalidate {
            if_none_match: Some("\"a\""),
            if_modified_since: None
        }
    );
    let other = "http://lms.example/p.js";
    cache.store(
        other,
        200,
        &headers(&[
            ("Pragma", "no-cache"),
            ("Last-Modified", "Tue, 01 Sep 2026 10:00:00 GMT"),
        ]),
        S(0),
    );
    assert!(matches!(
        cache.lookup(other, S(0)),
        Lookup::Revalidate { .. }
    ));
    // Cache-Control present: Pragma is not read.
    cache.store(
        other,
        200,
        &headers(&[("Pragma", "no-cache"), ("Cache-Control", "max-age=5")]),
        S(0),
    );
    assert_eq!(cache.lookup(other, S(4)), Lookup::Fresh);
}

#[test]
fn expires_counts_from_the_servers_date() {
    let mut cache = Cache::new();
    let h = headers(&[
        ("Date", "Thu, 26 Nov 2026 12:00:00 GMT"),
        ("Expires", "Thu, 26 Nov 2026 12:05:00 GMT"),
    ]);
    cache.store(URL, 200, &h, S(100));
    assert_eq!(cache.lookup(URL, S(399)), Lookup::Fresh);
    // Expired, no validators: fetched again.
    assert_eq!(cache.lookup(URL, S(400)), Lookup::Fetch);
    // An invalid Expires is in the past.
    cache.store(URL, 200, &headers(&[("Expires", "0"), ("ETag", "e")]), S(0));
    assert!(matches!(cache.lookup(URL, S(0)), Lookup::Revalidate { .. }));
    // max-age wins over Expires.
    let h = headers(&[("Expires", "0"), ("Cache-Control", "max-age=10")]);
    cache.store(URL, 200, &h, S(0));
    assert_eq!(cache.lookup(URL, S(9)), Lookup::Fresh);
}

#[test]
fn last_modified_alone_is_fresh_for_a_tenth_of_its_age() {
    // nginx's static file: Last-Modified and ETag, no Cache-Control. Ten
    // days old when served: fresh for one day.
    let mut cache = Cache::new();
    let h = headers(&[
        ("Date", "Thu, 26 Nov 2026 12:00:00 GMT"),
        ("Last-Modified", "Mon, 16 Nov 2026 12:00:00 GMT"),
        ("ETag", "\"6565-400\""),
    ]);
    cache.store(URL, 200, &h, S(0));
    assert_eq!(cache.lookup(URL, S(86_399)), Lookup::Fresh);
    assert!(matches!(
        cache.lookup(URL, S(86_400)),
        Lookup::Revalidate { .. }
    ));
    // A 304 without Last-Modified keeps the heuristic of the kept one.
    cache.store(
        URL,
        304,
        &headers(&[("Date", "Fri, 27 Nov 2026 12:00:00 GMT")]),
        S(86_400),
    );
    // Eleven days old now: 1.1 days more.
    assert_eq!(cache.lookup(URL, S(86_400 + 95_039)), Lookup::Fresh);
    assert!(matches!(
        cache.lookup(URL, S(86_400 + 95_040)),
        Lookup::Revalidate { .. }
    ));
}

#[test]
fn statuses_a_cache_may_not_keep_by_default() {
    let mut cache = Cache::new();
    let lm = ("Last-Modified", "Mon, 16 Nov 2026 12:00:00 GMT");
    for status in [302, 500, 503] {
        cache.store(URL, status, &headers(&[lm, ("ETag", "x")]), S(0));
        assert_eq!(cache.lookup(URL, S(0)), Lookup::Fetch, "{status}");
    }
    cache.store(URL, 404, &headers(&[("Cache-Control", "max-age=9")]), S(0));
    assert_eq!(cache.lookup(URL, S(8)), Lookup::Fresh);
    // Nothing to go on: not kept at all.
    cache.store("http://lms.example/x", 200, &headers(&[]), S(0));
    assert_eq!(cache.len(), 1);
}

#[test]
fn odd_cache_control_values() {
    assert_eq!(
        directives("MAX-AGE=\"30\", No-Cache=\"Set-Cookie\""),
        Directives {
            no_store: false,
            no_cache: true,
            max_age: Some(30)
        }
    );
    // Invalid and repeated max-age: invalid is stale, the first counts.
    assert_eq!(directives("max-age=abc").max_age, Some(0));
    assert_eq!(directives("max-age=5, max-age=500").max_age, Some(5));
    assert_eq!(directives(",,, ;").max_age, None);
}

/// RFC 9111 1.2.2: a delta-seconds too large to hold is 2^31 seconds, not
/// an invalid value (stale) nor a crash (u64::MAX seconds overflowed the
/// user's clock).
#[test]
fn max_age_too_large_counts_as_two_to_the_31_seconds() {
    assert_eq!(
        directives("max-age=18446744073709551616").max_age,
        Some(1 << 31)
    );
    for huge in [
        "max-age=18446744073709551616",
        "max-age=18446744073709551615",
    ] {
        let mut cache = Cache::new();
        let h = Headers {
            cache_control: Some(huge),
            ..Headers::default()
        };
        cache.store(URL, 200, &h, S(5));
        assert_eq!(
            cache.lookup(URL, S(5 + (1 << 31) - 1)),
            Lookup::Fresh,
            "{huge}"
        );
        assert_eq!(cache.lookup(URL, S(5 + (1 << 31))), Lookup::Fetch, "{huge}");
    }
    // An Age as large takes all of it.
    let mut cache = Cache::new();
    let h = headers(&[
        ("Cache-Control", "max-age=600"),
        ("Age", "99999999999999999999999"),
        ("ETag", "x"),
    ]);
    cache.store(URL, 200, &h, S(0));
    assert!(matches!(cache.lookup(URL, S(0)), Lookup::Revalidate { .. }));
    assert_eq!(directives("max-age=-5").max_age, Some(0));
    assert_eq!(directives("max-age=+5").max_age, Some(0));
}

#[test]
fn a_304_to_a_request_without_validators_is_an_error() {
    let (kind, said) = unasked_not_modified(304, false).expect("an error");
    assert_eq!(kind, ErrorKind::Protocol);
    assert!(said.contains("without If-None-Match"), "{said}");
    assert_eq!(unasked_not_modified(304, true), None);
    assert_eq!(unasked_not_modified(200, false), None);
}
