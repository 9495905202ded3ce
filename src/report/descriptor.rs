//! Method descriptors in Java source spelling, for frame names and reports.

use super::*;

/// `pkg.Class.name(param,param)` of a method given as in the class file.
pub(crate) fn frame_name(class: &str, name: &str, descriptor: &str) -> String {
    format!(
        "{}.{}({})",
        class.replace('/', "."),
        name,
        java_parameter_types(descriptor).join(",")
    )
}

impl NativeMethodRow {
    /// `pkg.Class.name(param,param)`: the method as a frame name (no spaces or semicolons).
    pub(crate) fn frame_name(&self) -> String {
        frame_name(&self.class, &self.name, &self.descriptor)
    }

    /// `pkg/Class.name(descriptor)` as in the text table.
    pub(crate) fn display_name(&self) -> String {
        format!(
            "{}.{}{}",
            self.class.replace('/', "."),
            self.name,
            self.descriptor
        )
    }
}

/// Parameter types of a method descriptor in Java source spelling: `(J[Ljava/lang/String;)V` →
/// `["long", "java.lang.String[]"]`. Malformed input yields what could be read.
pub(crate) fn java_parameter_types(descriptor: &str) -> Vec<String> {
    let inner = descriptor
        .strip_prefix('(')
        .and_then(|d| d.split(')').next())
        .unwrap_or("");
    let mut out = Vec::new();
    let mut chars = inner.chars();
    let mut dims = 0;
    while let Some(c) = chars.next() {
        let base = match c {
            '[' => {
                dims += 1;
                continue;
            }
            'B' => "byte".to_string(),
            'C' => "char".to_string(),
            'D' => "double".to_string(),
            'F' => "float".to_string(),
            'I' => "int".to_string(),
            'J' => "long".to_string(),
            'S' => "short".to_string(),
            'Z' => "boolean".to_string(),
            'L' => chars
                .by_ref()
                .take_while(|&c| c != ';')
                .collect::<String>()
                .replace('/', "."),
            other => other.to_string(),
        };
        out.push(format!("{base}{}", "[]".repeat(dims)));
        dims = 0;
    }
    out
}
