//! Every descriptor shape the wrapper must handle, checked two independent ways: the JDK's
//! `javap -v` must show the expected flags, max_stack, max_locals, exception handler, frame and
//! kept attributes (all expectations computed here from the Java source table), and the JVM must
//! load and verify the rewritten class under `-Xverify:all`.

mod common;

use common::*;
use nativeacct_classfile::{reason, rewrite, Outcome, RewriteConfig};
use std::collections::BTreeMap;
use std::process::Command;

struct Shape {
    modifiers: &'static str,
    ret: &'static str,
    name: &'static str,
    params: Vec<String>,
    throws: &'static str,
}

fn shape(modifiers: &'static str, ret: &'static str, name: &'static str, params: &[&str]) -> Shape {
    Shape {
        modifiers,
        ret,
        name,
        params: params.iter().map(|p| p.to_string()).collect(),
        throws: "",
    }
}

fn shapes() -> Vec<Shape> {
    let mut v = vec![
        shape("static", "void", "none", &[]),
        shape("", "void", "noneInstance", &[]),
        shape("static", "boolean", "z", &["boolean"]),
        shape("static", "byte", "b", &["byte"]),
        shape("static", "char", "c", &["char"]),
        shape("static", "short", "s", &["short"]),
        shape("static", "int", "i", &["int"]),
        shape("static", "long", "j", &["long"]),
        shape("static", "float", "f", &["float"]),
        shape("static", "double", "d", &["double"]),
        shape("", "long", "jInstance", &["long", "long"]),
        shape("", "double", "dInstance", &["double"]),
        shape("static", "int[]", "intArray", &["int[]"]),
        shape("static", "String[][]", "stringGrid", &["String[][]"]),
        shape(
            "",
            "long[]",
            "arrays",
            &["long[]", "double[]", "boolean[][][]"],
        ),
        shape(
            "",
            "Object",
            "objects",
            &["Object", "String", "java.util.List<String>"],
        ),
        shape(
            "static",
            "double",
            "mixed",
            &["long", "int", "double", "float", "long", "byte"],
        ),
        shape(
            "",
            "float",
            "mixedInstance",
            &["double", "char", "long", "Object", "short"],
        ),
        shape("static synchronized", "int", "syncStatic", &["int"]),
        shape("synchronized", "long", "syncInstance", &["long"]),
        shape("public final", "String", "publicFinal", &["String"]),
        shape("protected", "char", "protectedOne", &["char"]),
        shape("private static", "void", "privateOne", &[]),
        shape("static", "int", "varargs", &["String", "Object..."]),
        shape("", "long", "varargsInstance", &["long..."]),
        shape("static", "<T> T", "generic", &["java.util.List<T>"]),
    ];
    let mut throwing = shape("", "int", "throwing", &["int"]);
    throwing.throws = " throws java.io.IOException, InterruptedException";
    v.push(throwing);
    let mut wide_static: Vec<String> = (0..127).map(|_| "long".to_string()).collect();
    wide_static.push("int".into());
    v.push(Shape {
        params: wide_static,
        ..shape("static", "long", "wideStatic255", &[])
    });
    v.push(Shape {
        params: (0..127).map(|_| "long".to_string()).collect(),
        ..shape("", "double", "wideInstance255", &[])
    });
    v.push(Shape {
        params: (0..220).map(|_| "int".to_string()).collect(),
        ..shape("static", "int", "wideInts220", &[])
    });
    v.push(Shape {
        params: (0..101).map(|_| "double".to_string()).collect(),
        ..shape("", "Object", "wideDoubles", &[])
    });
    v
}

fn java_slots(param: &str) -> u16 {
    if param == "long" || param == "double" {
        2
    } else {
        1
    }
}

fn ret_slots(ret: &str) -> u16 {
    match ret {
        "void" => 0,
        "long" | "double" => 2,
        _ => 1,
    }
}

fn source(shapes: &[Shape]) -> String {
    let mut s = String::from("public class Shapes {\n");
    for sh in shapes {
        let params: Vec<String> = sh
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| format!("{p} a{k}"))
            .collect();
        s += &format!(
            "    {} native {} {}({}){};\n",
            sh.modifiers,
            sh.ret,
            sh.name,
            params.join(", "),
            sh.throws
        );
    }
    s += "    @jdk.internal.vm.annotation.IntrinsicCandidate @Deprecated static native int intrinsic(int x);\n";
    s += "    @jdk.internal.reflect.CallerSensitive static native Class<?> callerSensitive();\n";
    s += "    static native void registerNatives();\n";
    s += "    static int plain(int x) { return x + 1; }\n}\n";
    s
}

fn flags_of(modifiers: &str) -> u16 {
    let mut flags = 0;
    for m in modifiers.split_whitespace() {
        flags |= match m {
            "public" => 0x0001,
            "private" => 0x0002,
            "protected" => 0x0004,
            "static" => 0x0008,
            "final" => 0x0010,
            "synchronized" => 0x0020,
            _ => 0,
        };
    }
    flags
}

/// One method as javap prints it.
#[derive(Default, Debug)]
struct JavapMethod {
    flags: u16,
    code: Option<(u16, u16, u16)>,
    first_instruction: String,
    handler_any: usize,
    frames: Vec<String>,
    throws: String,
    annotations: Vec<String>,
}

fn javap(class: &std::path::Path) -> BTreeMap<String, JavapMethod> {
    let text = run_ok(
        Command::new(jdk_tool("javap"))
            .args(["-v", "-p"])
            .arg(class),
    );
    let mut methods = BTreeMap::new();
    let mut current: Option<(String, JavapMethod)> = None;
    let mut in_annotations = false;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if indent == 2 && t.ends_with(';') && t.contains('(') {
            if let Some((n, m)) = current.take() {
                methods.insert(n, m);
            }
            let before = &t[..t.find('(').unwrap()];
            let name = before.rsplit(' ').next().unwrap().to_string();
            current = Some((name, JavapMethod::default()));
            in_annotations = false;
            continue;
        }
        let Some((_, m)) = current.as_mut() else {
            continue;
        };
        if indent == 4 {
            in_annotations = t.starts_with("RuntimeVisibleAnnotations");
        }
        if let Some(rest) = t.strip_prefix("flags: (0x") {
            m.flags = u16::from_str_radix(&rest[..4], 16).unwrap();
        } else if t.starts_with("stack=") {
            let nums: Vec<u16> = t
                .split(", ")
                .map(|kv| kv.split('=').nth(1).unwrap().parse().unwrap())
                .collect();
            m.code = Some((nums[0], nums[1], nums[2]));
        } else if t.starts_with("0: ") && m.first_instruction.is_empty() {
            m.first_instruction = t[3..].split_whitespace().collect::<Vec<_>>().join(" ");
        } else if t.ends_with(" any") {
            m.handler_any += 1;
        } else if t.starts_with("frame_type") || t.starts_with("stack = [") {
            m.frames.push(t.to_string());
        } else if t.starts_with("throws ") {
            m.throws = t.to_string();
        } else if in_annotations && indent == 8 {
            m.annotations.push(t.to_string());
        }
    }
    if let Some((n, m)) = current.take() {
        methods.insert(n, m);
    }
    methods
}

#[test]
fn every_descriptor_shape_gets_a_correct_wrapper() {
    let dir = scratch("shapes");
    let shapes = shapes();
    let classes = javac(
        &dir,
        &[("Shapes.java", &source(&shapes))],
        &[
            "--add-exports",
            "java.base/jdk.internal.vm.annotation=ALL-UNNAMED",
            "--add-exports",
            "java.base/jdk.internal.reflect=ALL-UNNAMED",
        ],
    );
    let original = std::fs::read(classes.join("Shapes.class")).unwrap();
    // Ids that need every push form: iconst, bipush, sipush, ldc.
    let ids = [0, 5, -1, 100, -128, 1000, 32767, 40_000, -70_000, i32::MAX];
    let mut config = RewriteConfig::for_jdk(17);
    config.policy.wrap_intrinsics = true;
    let mut handed = Vec::new();
    let outcome = rewrite(&original, &config, &mut |m| {
        let id = ids[handed.len() % ids.len()];
        handed.push((m.name.clone(), id));
        id
    })
    .unwrap();
    let Outcome::Rewritten {
        bytes,
        wrapped,
        skipped,
    } = outcome
    else {
        panic!("Shapes must be rewritten")
    };
    assert_eq!(
        wrapped.len(),
        shapes.len() + 1,
        "every shape plus the intrinsic"
    );
    let skip_reasons: BTreeMap<String, String> = skipped
        .iter()
        .map(|s| (s.method.name.clone(), s.reason.clone()))
        .collect();
    assert_eq!(skip_reasons["callerSensitive"], reason::CALLER_SENSITIVE);
    assert_eq!(skip_reasons["registerNatives"], reason::REGISTER_NATIVES);
    assert_eq!(skip_reasons.len(), 2);
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::write(out_dir.join("Shapes.class"), &bytes).unwrap();

    let methods = javap(&out_dir.join("Shapes.class"));
    let id_of: BTreeMap<String, i32> = handed.into_iter().collect();
    for sh in &shapes {
        let is_static = sh.modifiers.contains("static");
        let varargs = sh.params.last().is_some_and(|p| p.ends_with("..."));
        let arg_slots: u16 =
            sh.params.iter().map(|p| java_slots(p)).sum::<u16>() + u16::from(!is_static);
        let arg_count = sh.params.len() as u16 + u16::from(!is_static);
        let expected_stack = arg_slots.max(ret_slots(sh.ret) + 1).max(2);
        let wrapper = methods
            .get(sh.name)
            .unwrap_or_else(|| panic!("no wrapper {}", sh.name));
        let expected_flags = flags_of(sh.modifiers) | if varargs { 0x0080 } else { 0 };
        assert_eq!(wrapper.flags, expected_flags, "{} flags", sh.name);
        assert_eq!(
            wrapper.code,
            Some((expected_stack, arg_slots, arg_count)),
            "{}: stack, locals, args_size (javap counts arguments, not slots)",
            sh.name
        );
        assert_eq!(wrapper.handler_any, 1, "{}: one catch-any handler", sh.name);
        assert_eq!(wrapper.frames.len(), 2, "{}: {:?}", sh.name, wrapper.frames);
        assert!(
            wrapper.frames[0].contains("same_locals_1_stack_item"),
            "{:?}",
            wrapper.frames
        );
        assert_eq!(wrapper.frames[1], "stack = [ class java/lang/Throwable ]");
        let id = id_of[sh.name];
        let expected_push = match id {
            -1 => "iconst_m1".to_string(),
            0..=5 => format!("iconst_{id}"),
            -128..=127 => format!("bipush {id}"),
            -32768..=32767 => format!("sipush {id}"),
            _ => format!("int {id}"),
        };
        assert!(
            wrapper.first_instruction.ends_with(&expected_push),
            "{}: first instruction {:?}, expected {expected_push}",
            sh.name,
            wrapper.first_instruction
        );
        if !sh.throws.is_empty() {
            assert_eq!(
                wrapper.throws,
                "throws java.io.IOException, java.lang.InterruptedException"
            );
        }
        let renamed = methods
            .get(&format!("$nativeacct${}", sh.name))
            .unwrap_or_else(|| panic!("no renamed native for {}", sh.name));
        let expected_renamed = 0x1102 | if is_static { 0x0008 } else { 0 };
        assert_eq!(renamed.flags, expected_renamed, "{} renamed flags", sh.name);
        assert!(renamed.code.is_none());
    }
    // The intrinsic keeps @Deprecated but loses @IntrinsicCandidate.
    let before = javap(&classes.join("Shapes.class"));
    assert_eq!(
        before["intrinsic"].annotations,
        [
            "jdk.internal.vm.annotation.IntrinsicCandidate",
            "java.lang.Deprecated"
        ]
    );
    let intrinsic = &methods["intrinsic"];
    assert_eq!(
        intrinsic.annotations.len(),
        1,
        "{:?}",
        intrinsic.annotations
    );
    assert_eq!(intrinsic.annotations[0], "java.lang.Deprecated");
    // Skipped natives and plain methods are untouched.
    assert_eq!(methods["callerSensitive"].flags & 0x0100, 0x0100);
    assert!(!methods.contains_key("$nativeacct$callerSensitive"));
    assert!(methods["plain"].code.is_some());

    // The JVM links (and so verifies) every wrapper.
    let loader = javac(
        &dir.join("loader"),
        &[(
            "LoadShapes.java",
            "public class LoadShapes { public static void main(String[] a) throws Exception {\n\
             Class<?> c = Class.forName(\"Shapes\", true, LoadShapes.class.getClassLoader());\n\
             System.out.println(\"loaded \" + c.getDeclaredMethods().length); } }\n",
        )],
        &[],
    );
    let out = run_ok(
        Command::new(jdk_tool("java"))
            .arg("-Xverify:all")
            .arg("-cp")
            .arg(format!("{}:{}", out_dir.display(), loader.display()))
            .arg("LoadShapes"),
    );
    // Every shape and the intrinsic have two methods now; plus callerSensitive, registerNatives, plain.
    assert_eq!(out.trim(), format!("loaded {}", 2 * (shapes.len() + 1) + 3));
}
