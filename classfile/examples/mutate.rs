//! Deterministic mutation fuzzing of the rewriter (stable toolchain, no instrumentation).
//!
//! Usage: `cargo run --release -p nativeacct-classfile --example mutate -- CORPUS_DIR [EXECS] [SEED]`
//!
//! Takes every `.class` under CORPUS_DIR (e.g. an extracted java.base), mutates them (bit flips,
//! interesting u16 values, truncation, chunk copies and splices between classes) and runs the
//! pre-scan and `rewrite` on each mutant. Oracles: no panic (a panic hook saves the input and
//! aborts), and every class the rewriter produces must itself pre-scan and rewrite again without
//! error and without wrapping anything new.

use nativeacct_classfile::corpus::class_files_under;
use nativeacct_classfile::{has_native_methods, rewrite, Outcome, RewriteConfig};
use std::cell::RefCell;
use std::path::Path;
use std::time::Instant;

thread_local! {
    static CURRENT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING_U16: [u16; 10] = [0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = input.len();
        if len == 0 {
            input.push(rng.next() as u8);
            continue;
        }
        match rng.below(9) {
            0 | 1 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            2 => {
                let at = rng.below(len);
                input[at] = rng.next() as u8;
            }
            3 if len >= 2 => {
                let at = rng.below(len - 1);
                let v = INTERESTING_U16[rng.below(INTERESTING_U16.len())];
                let v = if rng.below(2) == 0 {
                    v
                } else {
                    let old = u16::from_be_bytes([input[at], input[at + 1]]);
                    old.wrapping_add(rng.below(5) as u16).wrapping_sub(2)
                };
                input[at..at + 2].copy_from_slice(&v.to_be_bytes());
            }
            4 => input.truncate(rng.below(len)),
            5 => {
                // Copy a chunk inside the class.
                let from = rng.below(len);
                let n = rng.below((len - from).min(64)) + 1;
                let to = rng.below(len);
                let chunk: Vec<u8> = input[from..from + n].to_vec();
                let end = (to + n).min(len);
                input[to..end].copy_from_slice(&chunk[..end - to]);
            }
            6 => {
                // Insert or delete a few bytes.
                let at = rng.below(len);
                if rng.below(2) == 0 {
                    let n = rng.below(8) + 1;
                    for _ in 0..n {
                        input.insert(at, rng.next() as u8);
                    }
                } else {
                    let n = rng.below(8).min(len - at);
                    input.drain(at..at + n);
                }
            }
            7 => {
                // Splice the tail of another class.
                let other = &corpus[rng.below(corpus.len())];
                let at = rng.below(len);
                let from = rng.below(other.len());
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            _ => {
                let at = rng.below(len);
                input[at] = input[at].wrapping_add(1);
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: mutate CORPUS_DIR [EXECS] [SEED]");
        std::process::exit(2);
    };
    let execs: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let paths = class_files_under(Path::new(&dir));
    let all: Vec<Vec<u8>> = paths.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    // Mostly classes with natives (they reach the rewrite path), plus a sample of the rest.
    let mut corpus: Vec<Vec<u8>> = all
        .iter()
        .filter(|b| has_native_methods(b).unwrap_or(false))
        .cloned()
        .collect();
    corpus.extend(all.iter().step_by(25).cloned());
    if corpus.is_empty() {
        eprintln!("mutate: no class files under {dir}");
        std::process::exit(1);
    }
    std::panic::set_hook(Box::new(|info| {
        let saved = CURRENT.with(|c| c.borrow().clone());
        let path = std::env::temp_dir().join("nativeacct-mutate-crash.class");
        let _ = std::fs::write(&path, &saved);
        eprintln!("PANIC on a mutant (saved to {}): {info}", path.display());
        std::process::abort();
    }));

    let mut config = RewriteConfig::for_jdk(17);
    let mut rng = Rng(seed | 1);
    let mut rewritten = 0u64;
    let mut unchanged = 0u64;
    let mut errors = 0u64;
    let start = Instant::now();
    let mut input = Vec::new();
    for exec in 0..execs {
        // Vary the policy a little so intrinsic stripping and owner injection are reached.
        config.policy.wrap_intrinsics = exec % 3 == 0;
        config.helper.owner = if exec % 7 == 0 {
            "java/lang/Object".into()
        } else {
            "Gate".into()
        };
        input.clear();
        input.extend_from_slice(&corpus[rng.below(corpus.len())]);
        mutate(&mut rng, &mut input, &corpus);
        CURRENT.with(|c| c.borrow_mut().clone_from(&input));
        let _ = has_native_methods(&input);
        match rewrite(&input, &config, &mut |_| exec as i32) {
            Ok(Outcome::Rewritten { bytes, .. }) => {
                rewritten += 1;
                CURRENT.with(|c| c.borrow_mut().clone_from(&bytes));
                let again = rewrite(&bytes, &config, &mut |m| {
                    panic!("output re-wrapped {}.{}", m.class, m.name)
                });
                assert!(
                    has_native_methods(&bytes).is_ok(),
                    "output fails the pre-scan"
                );
                match again {
                    Ok(Outcome::Unchanged { .. }) => {}
                    other => panic!("rewritten output did not rewrite to Unchanged: {other:?}"),
                }
            }
            Ok(Outcome::Unchanged { .. }) => unchanged += 1,
            Err(_) => errors += 1,
        }
        if (exec + 1) % 1_000_000 == 0 {
            eprintln!(
                "{} M execs, {:.0} execs/s",
                (exec + 1) / 1_000_000,
                (exec + 1) as f64 / start.elapsed().as_secs_f64()
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "mutate: {execs} executions without a panic in {secs:.1} s ({:.0}/s); corpus {} classes; \
         outcomes: {rewritten} rewritten (re-checked), {unchanged} unchanged, {errors} typed errors",
        execs as f64 / secs,
        corpus.len()
    );
}
