//! libFuzzer target: pre-scan and rewrite arbitrary bytes; anything the rewriter emits must be
//! readable again and must not be wrapped twice. Seed with real classes:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run rewrite corpus/ -- -max_total_time=600`
#![no_main]

use libfuzzer_sys::fuzz_target;
use nativeacct_classfile::{has_native_methods, rewrite, Outcome, RewriteConfig};

fuzz_target!(|data: &[u8]| {
    let mut config = RewriteConfig::for_jdk(17);
    // The first byte (when there is one) steers the policy so stripping and injection are reached.
    let steer = data.first().copied().unwrap_or(0);
    config.policy.wrap_intrinsics = steer & 1 != 0;
    if steer & 2 != 0 {
        config.helper.owner = "Gate".into();
    }
    let _ = has_native_methods(data);
    if let Ok(Outcome::Rewritten { bytes, .. }) = rewrite(data, &config, &mut |_| 40_000) {
        assert!(has_native_methods(&bytes).is_ok());
        match rewrite(&bytes, &config, &mut |m| panic!("re-wrapped {}.{}", m.class, m.name)) {
            Ok(Outcome::Unchanged { .. }) => {}
            other => panic!("second rewrite: {other:?}"),
        }
    }
});
