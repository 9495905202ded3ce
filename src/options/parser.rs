//! The option string parsed into [`Options`]: one clear line for anything it cannot read.

use super::*;

/// Parse the option string. The error is a single line that names the valid options.
pub fn parse(raw: Option<&str>) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut format_given = false;
    let raw = raw.unwrap_or("").trim();
    if raw.is_empty() {
        return Ok(opts);
    }
    for item in raw.split(',') {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v)),
            None => (item.trim(), None),
        };
        let need = |v: Option<&str>| -> Result<String, String> {
            match v {
                Some(v) if !v.is_empty() => Ok(v.to_string()),
                _ => Err(format!("option '{key}' needs a value ({key}=...)")),
            }
        };
        let flag = |v: Option<&str>| -> Result<(), String> {
            match v {
                None => Ok(()),
                Some(_) => Err(format!("option '{key}' takes no value")),
            }
        };
        match key {
            "help" => {
                flag(value)?;
                opts.help = true;
            }
            "quiet" => {
                flag(value)?;
                opts.quiet = true;
            }
            "verbose" => {
                flag(value)?;
                opts.verbose = true;
            }
            "file" => opts.file = Some(PathBuf::from(need(value)?)),
            "format" => {
                for name in need(value)?.split('+') {
                    let Some(format) = Format::from_name(name.trim()) else {
                        return Err(format!(
                            "format={name}: expected json, text, csv, hgrm, hlog, collapsed, html, svg or pprof (several joined by +)"
                        ));
                    };
                    opts.formats.push(format);
                }
                format_given = true;
            }
            "top" => {
                let v = need(value)?;
                opts.top = match v.parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err(format!("top={v}: expected a positive number")),
                }
            }
            "depth" => {
                let v = need(value)?;
                opts.depth = match v.parse::<u32>() {
                    Ok(n) if (1..=MAX_DEPTH).contains(&n) => n,
                    _ => {
                        return Err(format!(
                            "depth={v}: expected a number from 1 to {MAX_DEPTH}"
                        ))
                    }
                }
            }
            "stacks" => {
                let v = need(value)?;
                opts.stacks = match v.as_str() {
                    "every" => StackSampling::Every,
                    n => match n.parse::<u32>() {
                        Ok(1) => StackSampling::Every,
                        Ok(n) if n >= 2 => StackSampling::Nth(n),
                        _ => {
                            return Err(format!(
                                "stacks={v}: expected every or a positive number N (every Nth call)"
                            ))
                        }
                    },
                }
            }
            "interval" => {
                let v = need(value)?;
                opts.interval = Some(parse_duration(key, &v)?);
            }
            "snapshot" => {
                let v = need(value)?;
                opts.snapshot = Some(parse_duration(key, &v)?);
            }
            "scan" => {
                let v = need(value)?;
                opts.scan = match v.as_str() {
                    "off" => None,
                    _ => Some(parse_duration(key, &v).map_err(|_| {
                        format!(
                            "scan={v}: expected off or a duration from 10ms to 24h, e.g. 100ms, 1s"
                        )
                    })?),
                };
            }
            "exits" => {
                let v = need(value)?;
                opts.exit_hook = match v.as_str() {
                    "hook" => true,
                    "scan" => false,
                    _ => return Err(format!("exits={v}: expected hook or scan")),
                };
            }
            "prefix" => {
                let p = need(value)?;
                if p.contains(['.', ';', '[', '/', '<', '>']) {
                    return Err(format!(
                        "prefix={p}: must not contain any of . ; [ / < > (it becomes part of method names)"
                    ));
                }
                opts.prefix = p;
            }
            "include" => opts.include.extend(patterns(key, &need(value)?)?),
            "exclude" => opts.exclude.extend(patterns(key, &need(value)?)?),
            "intrinsics" => {
                opts.wrap_intrinsics =
                    either(key, &need(value)?, [("skip", false), ("wrap", true)])?
            }
            "clock" => {
                let v = need(value)?;
                opts.clock = ClockRequest::from_name(&v).ok_or_else(|| {
                    format!("clock={v}: expected auto, cycles, task-clock, thread-cputime, tsc, tsc-hybrid or tsc-gated")
                })?;
            }
            "j2n" => {
                opts.j2n = either(
                    key,
                    &need(value)?,
                    [("bind", J2nMode::Bind), ("wrap", J2nMode::Wrap)],
                )?
            }
            "metrics" => opts.metrics = Some(parse_listen_address(&need(value)?)?),
            "boundary" => {
                let v = need(value)?;
                (opts.boundary, opts.boundary_timer_only) = match v.as_str() {
                    "on" => (true, false),
                    "timer" => (true, true),
                    "off" => (false, false),
                    _ => return Err(format!("boundary={v}: expected on, timer or off")),
                }
            }
            "boundary_period" => opts.boundary_period = parse_sample_period(&need(value)?)?,
            "boundary_after" => opts.boundary_after = parse_arm_after(&need(value)?)?,
            "timing" => {
                opts.sampled_timing =
                    either(key, &need(value)?, [("exact", false), ("sampled", true)])?
            }
            "jni_counts" => {
                opts.count_every_jni_function =
                    either(key, &need(value)?, [("all", true), ("upcalls", false)])?
            }
            "control" => opts.control = either(key, &need(value)?, [("on", true), ("off", false)])?,
            "mode" => {
                opts.mode = either(key, &need(value)?, [("ipa", Mode::Ipa), ("spa", Mode::Spa)])?
            }
            "" => {
                return Err(format!(
                    "empty option in '{raw}'; valid options: {}",
                    valid_names()
                ))
            }
            other => {
                return Err(format!(
                    "unknown option '{other}'; valid options: {}",
                    valid_names()
                ))
            }
        }
    }
    // A file with no format means JSON, and so does snapshot= (it needs a file); interval= and
    // stacks= bring their own formats along.
    if !format_given
        && (opts.file.is_some()
            || opts.interval.is_some()
            || opts.snapshot.is_some()
            || opts.stacks != StackSampling::Off)
    {
        opts.formats.push(Format::Json);
    }
    if opts.interval.is_some() {
        opts.formats.push(Format::Hlog);
    }
    if opts.stacks != StackSampling::Off {
        opts.formats.push(Format::Collapsed);
    }
    opts.formats.sort();
    opts.formats.dedup();
    if opts.sampled_timing && (!opts.boundary || opts.mode == Mode::Spa) {
        return Err(
            "timing=sampled: the split is estimated by the boundary sampler, so it needs boundary=on (or timer) and mode=ipa"
                .to_string(),
        );
    }
    Ok(opts)
}

/// An option that takes one of two words: the value of the word given, else an error naming both.
fn either<T>(key: &str, given: &str, words: [(&str, T); 2]) -> Result<T, String> {
    let (first, second) = (words[0].0, words[1].0);
    words
        .into_iter()
        .find(|(word, _)| *word == given)
        .map(|(_, value)| value)
        .ok_or_else(|| format!("{key}={given}: expected {first} or {second}"))
}

/// `metrics=[ADDR:]PORT`: a port alone listens on 127.0.0.1; IPv6 addresses go in brackets.
pub(super) fn parse_listen_address(v: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    let bad = || {
        format!(
            "metrics={v}: expected [ADDR:]PORT with a port from 1 to 65535, e.g. 9404, 0.0.0.0:9404, [::1]:9404"
        )
    };
    let port = |p: &str| p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(bad);
    if let Ok(alone) = port(v) {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), alone));
    }
    let (addr, p) = v.rsplit_once(':').ok_or_else(bad)?;
    let addr = addr
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(addr);
    let ip: IpAddr = addr.parse().map_err(|_| bad())?;
    Ok(SocketAddr::new(ip, port(p)?))
}

/// `interval=`, `snapshot=` and `scan=`: a number with an optional unit (ms, s, m); no unit means seconds.
/// At least 10 ms.
/// `boundary_period=`: `Nus`, `Nms` or `Ns`, from 100us to 1s.
fn parse_sample_period(v: &str) -> Result<std::time::Duration, String> {
    let (number, scale_us) = if let Some(n) = v.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1000.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1_000_000.0)
    } else {
        (v, 0.0)
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n * scale_us >= 100.0 && n * scale_us <= 1_000_000.0 => {
            Ok(std::time::Duration::from_micros((n * scale_us) as u64))
        }
        _ => Err(format!(
            "boundary_period={v}: expected a duration from 100us to 1s with its unit, e.g. 1ms, 500us"
        )),
    }
}

/// `boundary_after=`: `0`, or `Nus`, `Nms` or `Ns` up to 1s.
fn parse_arm_after(v: &str) -> Result<std::time::Duration, String> {
    if v == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    let (number, scale_us) = if let Some(n) = v.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1000.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1_000_000.0)
    } else {
        (v, f64::NAN)
    };
    match number.parse::<f64>() {
        Ok(n) if (0.0..=1_000_000.0).contains(&(n * scale_us)) => Ok(
            std::time::Duration::from_nanos((n * scale_us * 1000.0) as u64),
        ),
        _ => Err(format!(
            "boundary_after={v}: expected 0 or a duration up to 1s with its unit, e.g. 1ms, 500us"
        )),
    }
}

pub(super) fn parse_duration(key: &str, v: &str) -> Result<std::time::Duration, String> {
    let (number, scale_ms) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        (v, 1000.0)
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n * scale_ms >= 10.0 && n * scale_ms <= 86_400_000.0 => Ok(
            std::time::Duration::from_micros((n * scale_ms * 1000.0) as u64),
        ),
        _ => Err(format!(
            "{key}={v}: expected a duration from 10ms to 24h, e.g. 500ms, 1s, 2m"
        )),
    }
}
