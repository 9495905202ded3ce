//! The `Wide` fixture shared by the bind tests (tests/bind_transparency.rs, tests/arm64_emulated.rs):
//! natives whose arguments fill every register and spill hundreds of stack slots.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How both tests compile the transparency fixture's C: frame pointers kept and no sibling calls,
/// so that the natives' own frame checks see what the VM passed.
pub const TRANSPARENCY_CFLAGS: [&str; 3] = [
    "-O1",
    "-fno-omit-frame-pointer",
    "-fno-optimize-sibling-calls",
];

/// Writes the Wide sources into `dir`; returns the transparency fixture's C and Java sources.
pub fn transparency_sources(root: &Path, dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    write_wide_sources(dir);
    (
        vec![root.join("tests/bind/transparency.c"), dir.join("wide.c")],
        vec![
            root.join("tests/bind/Transparency.java"),
            dir.join("Wide.java"),
        ],
    )
}

/// `Wide.java` and `wide.c`: natives with 255 argument slots of ints, of longs and of doubles.
pub fn write_wide_sources(dir: &Path) {
    let mut java = String::from("class Wide {\n");
    let mut c = String::from("#include <jni.h>\n");
    // (name, Java type, JNI type, count): 255 slots each (a long or double takes two).
    let shapes = [
        ("ints", "int", "jint", 255),
        ("longs", "long", "jlong", 127),
        ("doubles", "double", "jdouble", 127),
    ];
    let mut checks = Vec::new();
    for (name, jtype, ctype, count) in shapes {
        let params: Vec<String> = (0..count).map(|i| format!("{jtype} a{i}")).collect();
        let _ = writeln!(
            java,
            "    static native double {name}({});",
            params.join(", ")
        );
        let args: Vec<String> = (0..count)
            .map(|i| match jtype {
                "int" => format!("{}", i as i64 * 7 - 300),
                "long" => format!("{}L", (i as i64 - 60) * 1_000_003),
                _ => format!("{}.25", i * 3),
            })
            .collect();
        let sum: Vec<String> = (0..count)
            .map(|i| format!("({} * (double) {})", i + 1, args[i]))
            .collect();
        let _ = writeln!(
            java,
            "    static String {name}Check() {{ double n = {name}({}); double j = {}; return \"{name} \" + n + \" \" + (n == j); }}",
            args.join(", "),
            sum.join(" + ")
        );
        checks.push(format!("{name}Check()"));
        let cparams: Vec<String> = (0..count).map(|i| format!("{ctype} a{i}")).collect();
        let _ = writeln!(
            c,
            "JNIEXPORT jdouble JNICALL Java_Wide_{name}(JNIEnv *env, jclass cls, {}) {{\n    (void)env; (void)cls;\n    double s = 0;",
            cparams.join(", ")
        );
        for i in 0..count {
            let _ = writeln!(c, "    s += {} * (double)a{i};", i + 1);
        }
        c.push_str("    return s;\n}\n");
    }
    let _ = writeln!(
        java,
        "    static String check() {{ return {}; }}\n}}",
        checks.join(" + \"; \" + ")
    );
    std::fs::write(dir.join("Wide.java"), java).unwrap();
    std::fs::write(dir.join("wide.c"), c).unwrap();
}
